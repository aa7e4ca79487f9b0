"""`Search`: every stored message of every Session, indexed as it is stored, found by words.

**Indexing follows the commit.** It observes the live Sessions and indexes
their messages (`message/user`, `message/assistant`) once they are durable,
never on append: at each `session/flushed`, and — since most events are
stored by the write path in the background, with no flush anyone awaits —
for a Session that appended a message, every `SETTLE_SECONDS` up to what
the write path confirmed (`durable`), until all of it is. Jobs of one
Session that arrive while the worker is busy are taken together (one write
for a burst). A live Session holds its own events from `fold_start` on;
what lies before (a fork's copied prefix) or was never indexed (a crash
between a flush and its indexing, an index made afresh) is read from
storage.

**Catching up.** At start, in the background, every stored Session whose
stored length is past what a persistent index holds is indexed from there
(rule 2 of `dsh.search.index`); a new or rebuilt index is thereby filled
from the logs. (An index in memory — the `memory:` store — holds what
this host stored since it started.) A restored Session is indexed again; a
deleted one is forgotten.

**Failing is quiet.** The index is a cache: a write it refuses is logged
and the Session's mark does not move, so its next flush (or the next
start) indexes it again; a search it cannot answer falls back to the
list's own match (title, first message, id).

**Finding.** `find(text)` parses the person's words (`dsh.search.terms`)
and answers, per Session, its best-ranked message with a snippet — at most
`MAX_SESSIONS` Sessions, best first.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import JsonValue

from ..base.background import Background
from ..base.scope import Disposer
from ..persistence.backend import Backend
from ..persistence.errors import SessionNotFound, StorageError
from ..search.index import Document, SearchIndex
from ..search.terms import parse_query, snippet
from ..session.event import SessionEvent
from ..session.live import LiveSessions, Observation, SessionFlushed
from ..session.log import Session
from ..session.summary import SessionSummary
from ..session.types import ASSISTANT_MESSAGE, USER_MESSAGE

# How long closing waits for the worker to index what is queued (the rest waits
# for the next start's catch-up).
CLOSE_GRACE_SECONDS = 5.0

__all__ = ["HITS", "MAX_SESSIONS", "Match", "Search", "ranked_rows"]

log = logging.getLogger(__name__)

#: How often Sessions that appended messages are looked at again (seconds).
SETTLE_SECONDS = 0.5
#: At most this many Sessions are answered for one search (the best-ranked).
MAX_SESSIONS = 200
#: Messages asked of the index for one search, before grouping them by Session.
HITS = 1000
_TYPES = frozenset({USER_MESSAGE, ASSISTANT_MESSAGE})


@dataclass(frozen=True, slots=True)
class Match:
    """Why a Session was found: its best message (`seq`), cut to a `snippet`, and its rank."""

    seq: int
    snippet: str
    rank: float

    def to_dict(self) -> dict[str, JsonValue]:
        """`{"seq", "snippet"}` (the list entry's `match`)."""
        return {"seq": self.seq, "snippet": self.snippet}


@dataclass(frozen=True, slots=True)
class _Job:
    """Index Session `session_id` up to `through`; `session` is its live object, if any."""

    session_id: str
    through: int | None  # None: to its stored end
    session: Session | None = None


class Search:
    """The Host's search (see the module docstring)."""

    def __init__(
        self,
        index: SearchIndex,
        live: LiveSessions,
        backend: Backend,
        durable: Callable[[Session], int],
        *,
        background: Background | None = None,
    ) -> None:
        self.index = index
        self._live = live
        self._backend = backend
        self._durable = durable
        self._background = background or Background()
        self._marks: dict[str, int] = {}
        # Sessions that appended a message not yet indexed, by id (their live object).
        self._waiting: dict[str, Session] = {}
        self._appended = anyio.Event()
        self._send: MemoryObjectSendStream[_Job] | None = None
        self._stop_observing: Disposer | None = None
        self._drained = anyio.Event()
        self._working: anyio.CancelScope | None = None  # the worker's: cut at close

    async def start(self, group: TaskGroup) -> None:
        """Open the index, observe the live Sessions and start the worker and the catch-up."""
        try:
            await self.index.open()
            self._marks = await self.index.through()
        except StorageError as error:
            log.warning("search will only match titles: %s", error)
            return
        self._send, jobs = anyio.create_memory_object_stream[_Job](math.inf)
        self._stop_observing = self._live.observe(self._observe)
        group.start_soon(self._work, jobs, name="search index")
        group.start_soon(self._settle, name="search settle")
        if self.index.persistent:
            group.start_soon(self._catch_up, name="search catch-up")

    async def aclose(self) -> None:
        """Stop observing and close the index (what is not indexed yet is found next start)."""
        if self._stop_observing is not None:
            self._stop_observing()
        if self._send is not None:
            self._send.close()
            with anyio.move_on_after(CLOSE_GRACE_SECONDS):
                await self._drained.wait()
            # Whatever is left is caught up at the next start: stop before the index
            # closes under the worker (each job would fail on a closed index).
            if self._working is not None:
                self._working.cancel()
            await self._drained.wait()
        await self.index.aclose()

    # -- what the host tells it ----------------------------------------------------

    def forget(self, session_id: str) -> None:
        """The Session was deleted: drop it from the index (in the background)."""
        self._marks.pop(session_id, None)
        self._offer(_Job(session_id, through=-1))

    def again(self, session_id: str) -> None:
        """The Session was restored: index it from its start."""
        self._marks.pop(session_id, None)
        self._offer(_Job(session_id, through=None))

    async def rebuild(self) -> int:
        """Empty the index and index every stored Session again, now; how many there are.

        Raises `StorageError` when the index or the store cannot be used."""
        await self.index.clear()
        self._marks.clear()
        stored = await self._backend.list()
        for row in stored:
            await self._index(_Job(row.id, row.length))
        return len(stored)

    # -- finding ---------------------------------------------------------------------

    async def find(self, text: str) -> dict[str, Match] | None:
        """The best message of each Session that `text` finds, best Session first; None
        when the index cannot answer (the caller then matches titles only)."""
        query = parse_query(text)
        if query.empty or self._send is None:
            return {} if query.empty else None
        try:
            hits = await self.index.search(query, HITS)
        except StorageError as error:
            log.warning("search fell back to titles: %s", error)
            return None
        found: dict[str, Match] = {}
        for hit in hits:
            if hit.session_id not in found:
                found[hit.session_id] = Match(hit.seq, snippet(hit.text, query), hit.rank)
                if len(found) == MAX_SESSIONS:
                    break
        return found

    # -- the worker --------------------------------------------------------------------

    def _offer(self, job: _Job) -> None:
        if self._send is not None:
            with contextlib.suppress(anyio.ClosedResourceError):
                self._send.send_nowait(job)

    def _observe(self, observation: Observation) -> None:
        session = observation.session
        if isinstance(observation, SessionFlushed):
            # Nothing past what is indexed (a barrier with nothing new to store): no job.
            if observation.through > self._marks.get(session.id, 0):
                self._offer(_Job(session.id, observation.through, session))
        elif observation.event.type in _TYPES:
            self._waiting[session.id] = session
            self._appended.set()

    async def _settle(self) -> None:
        """Index what the write path confirmed of the Sessions that appended messages.

        Real time, not the Host's clock: it waits for the disk, not for a
        time of day (and a test's fake clock never sees it sleep)."""
        while True:
            await self._appended.wait()
            await anyio.sleep(SETTLE_SECONDS)
            self._appended = anyio.Event()
            for session_id, session in list(self._waiting.items()):
                durable = self._durable(session)
                if durable >= len(session) or self._live.find(session_id) is not session:
                    del self._waiting[session_id]  # all of it (or it closed: its close flushed)
                if durable > self._marks.get(session_id, 0):
                    self._offer(_Job(session_id, durable, session))
            if self._waiting:
                self._appended.set()  # some of it is still being written: look again

    async def _catch_up(self) -> None:
        try:
            stored = await self._backend.list()
        except StorageError as error:
            log.warning("search cannot list the stored sessions to catch up: %s", error)
            return
        behind = [row for row in stored if row.length > self._marks.get(row.id, 0)]
        if behind:
            log.info("search: indexing %d session(s) whose messages it does not hold", len(behind))
        for row in behind:
            self._offer(_Job(row.id, row.length))

    async def _work(self, jobs: MemoryObjectReceiveStream[_Job]) -> None:
        try:
            with anyio.CancelScope() as self._working:
                await self._take(jobs)
        finally:
            self._drained.set()

    async def _take(self, jobs: MemoryObjectReceiveStream[_Job]) -> None:
        async with jobs:
            async for job in jobs:
                # Background work: a storm's dispatches are stored first.
                await self._background.yield_to_urgent()
                batch = [job]
                # What queued up meanwhile is taken together (closed: the rest, then done).
                with contextlib.suppress(anyio.WouldBlock, anyio.EndOfStream):
                    while len(batch) < 1000:
                        batch.append(jobs.receive_nowait())
                for merged in _merged(batch):
                    await self._run(merged)

    async def _run(self, job: _Job) -> None:
        try:
            if job.through == -1:
                await self.index.forget(job.session_id)
                return
            await self._index(job)
        except SessionNotFound:
            return  # deleted meanwhile
        except StorageError as error:
            log.warning("search could not index session %s: %s", job.session_id, error)

    async def _index(self, job: _Job) -> None:
        start = self._marks.get(job.session_id, 0)
        if job.through is not None and job.through <= start:
            return
        session = job.session
        events: Sequence[SessionEvent]
        through: int | None
        if session is not None and job.through is not None and start >= session.fold_start:
            events = list(session.scan(start, job.through, types=_TYPES))
            through = job.through
        else:
            # The stored length first: what is appended after it is the next job's.
            cursor = await self._backend.cursor(job.session_id)
            through = cursor if job.through is None else job.through
            if through is None:
                return
            events = await self._backend.read(job.session_id, start, through, types=_TYPES)
        documents = [doc for event in events if (doc := _document(event)) is not None]
        await self.index.add(job.session_id, documents, through)
        self._marks[job.session_id] = max(self._marks.get(job.session_id, 0), through)


def ranked_rows(
    rows: Sequence[SessionSummary], text: str, found: dict[str, Match] | None
) -> list[tuple[SessionSummary, Match | None]]:
    """What `?q=text` lists: the rows whose title, first message or id start matches
    (newest first, as listed), then those whose messages do, best-ranked first — each with
    its best message when one matched. `found` None (no index) keeps the first kind only."""
    by_id = {row.id: row for row in rows}
    named = [row for row in rows if row.matches(text)]
    shown = {row.id for row in named}
    found = found or {}
    chosen: list[tuple[SessionSummary, Match | None]] = [(row, found.get(row.id)) for row in named]
    for session_id, match in found.items():
        row = by_id.get(session_id)
        if row is not None and session_id not in shown:
            chosen.append((row, match))
    return chosen


def _document(event: SessionEvent) -> Document | None:
    data = event.data
    text = data.get("text") if isinstance(data, dict) else None
    return Document(event.seq, text) if isinstance(text, str) and text.strip() else None


def _merged(batch: list[_Job]) -> list[_Job]:
    """One job per Session: the one that reaches furthest, the later of two equal ones
    (so a restore after a delete indexes again, a delete after anything forgets)."""
    chosen: dict[str, _Job] = {}
    for job in batch:
        before = chosen.get(job.session_id)
        if before is None or _reach(job) >= _reach(before):
            chosen[job.session_id] = job
    return list(chosen.values())


def _reach(job: _Job) -> float:
    """A forget (-1) or an index to the stored end (None) outranks an index to a seq."""
    return math.inf if job.through is None or job.through == -1 else job.through
