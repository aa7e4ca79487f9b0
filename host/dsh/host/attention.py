"""`Attention`: every Session's alerts, found at the commit point, and the pages that hear them.

**Finding alerts.** It observes the live Sessions. For each `session/flushed`
it asks the plugins (`dsh_session_alert`, through `alert_of`) about each
newly durable event of a plugin's own type — never on append, so an alert
never announces an event a failed write could take back — keeps what they
answer in the attention store (`dsh.attention`) with how far it looked
(`checked`), and only then tells the watchers. Plugins that subscribed to
the feed (`dsh.AlertFeed`) are handed each batch before it is recorded, so
what they keep durably is never cut off by a crash. Per live Session *object* it
remembers how far it looked; a new object (a resume) starts where the store
says it was checked, so an alert whose event was stored just before a crash
is found when the Session next goes live. A Session the store has never
seen starts at its first flush: its past (before this edition, or a fork's
copied prefix) is never announced.

**One worker.** Every change and every watcher's start runs, in order, in
one task: frames reach watchers in the order the store changed, and a
watcher's first frame (`hello`, the counts at that moment) is never
overtaken by an older count. A failing store never blocks that worker: a
derivation that could not be stored is tried again later (growing delays),
and its `checked` has not moved, so nothing is lost even if the Host stops
first.

**Frames** (what `WS /api/live` sends; `dsh.attention.Alert.to_frame`):

- `{"kind": "hello", "unread": {<session id>: N, ...}}` first, to each watcher;
- `{"kind": "alert", "sessionId", "seq", "title", "body", "tag", "at"}` once
  per alert (a page de-duplicates by `sessionId` and `seq` across reconnects);
- `{"kind": "unread", "sessionId", "count"}` when a Session's count changed.

On a store several hosts share, its notifications (`listen`) bring other
hosts' alerts and reads, announced here once each.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Sequence
from functools import partial
from typing import TypeVar
from weakref import WeakKeyDictionary

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from pydantic import JsonValue

from ..attention.alert import Alert, AlertContent
from ..attention.backend import AttentionBackend
from ..attention.feed import AlertSink
from ..base.background import Background
from ..base.backoff import Backoff
from ..base.listeners import Listeners
from ..base.scope import Disposer, Scope
from ..persistence.errors import StorageError
from ..session.event import SessionEvent
from ..session.events import HOST_EVENT_TYPES
from ..session.live import LiveSessions, Observation, SessionFlushed
from ..session.log import Session, SessionLog
from .errors import HostClosed

__all__ = ["REPLAY_LIMIT", "Attention", "Frame", "Watcher", "unread_frame"]

log = logging.getLogger(__name__)

Frame = dict[str, JsonValue]
Watcher = Callable[[Frame], None]
AlertOf = Callable[[SessionLog, SessionEvent], AlertContent | None]
Job = Callable[[], Awaitable[None]]
_T = TypeVar("_T")

#: At most this many alerts are replayed to a page that reconnects (`since`).
REPLAY_LIMIT = 100
#: How many announced alerts are remembered, so another host's echo is not sent twice.
ANNOUNCED_KEEP = 4096
#: A derivation the store refused is tried again after 0.2 s, doubling up to 10 s.
RETRY = Backoff(first=0.2, cap=10.0)


def unread_frame(session_id: str, count: int) -> Frame:
    """`{"kind": "unread", "sessionId", "count"}` (public)."""
    return {"kind": "unread", "sessionId": session_id, "count": count}


class Attention:
    """Alerts of every Session and who hears them (see the module docstring)."""

    def __init__(
        self,
        backend: AttentionBackend,
        live: LiveSessions,
        alert_of: AlertOf,
        *,
        retry: Backoff = RETRY,
        background: Background | None = None,
    ) -> None:
        self.backend = backend
        self._live = live
        self._alert_of = alert_of
        self._retry = retry
        self._background = background or Background()
        self._looked: WeakKeyDictionary[Session, int] = WeakKeyDictionary()
        self._watchers: Listeners[Watcher] = Listeners()
        self._sinks: Listeners[AlertSink] = Listeners()
        self._announced: OrderedDict[tuple[str, int], None] = OrderedDict()
        self._counts: dict[str, int] = {}
        self._send: MemoryObjectSendStream[Job] | None = None
        self._group: TaskGroup | None = None
        self._drained = anyio.Event()
        self._stop_observing: Disposer | None = None

    def start(self, group: TaskGroup) -> None:
        """Observe the live Sessions and run the worker (and the store's listener) in `group`."""
        self._group = group
        self._send, jobs = anyio.create_memory_object_stream[Job](math.inf)
        self._stop_observing = self._live.observe(self._observe)
        group.start_soon(self._work, jobs, name="attention")
        if self.backend.shared:
            group.start_soon(self.backend.listen, self._heard, name="attention listener")

    async def aclose(self, drain_seconds: float) -> None:
        """Stop observing, finish the queued work (at most `drain_seconds`), close the store.

        What is not done by then is found again when its Session next goes live.
        """
        if self._stop_observing is not None:
            self._stop_observing()
        if self._send is not None:
            self._send.close()
            with anyio.move_on_after(drain_seconds):
                await self._drained.wait()
        self._watchers.clear()
        await self.backend.aclose()

    # -- what the web asks ----------------------------------------------------------

    async def read(self, session_id: str, through_seq: int) -> int:
        """Mark the Session's alerts up to `through_seq` (inclusive) read; its count after."""
        return await self._call(partial(self._read, session_id, through_seq + 1))

    async def forget(self, session_id: str) -> None:
        """Drop the Session's alerts and read mark (it was deleted)."""
        await self._call(partial(self._forget, session_id))

    async def unread(self, session_ids: Collection[str] | None = None) -> dict[str, int]:
        """The unread count of each Session (of `session_ids`) that has any."""
        return await self.backend.unread(session_ids)

    async def watch(self, watcher: Watcher, since: int | None = None) -> Disposer:
        """Send `watcher` a `hello`, the alerts stored after epoch ms `since` (at most
        `REPLAY_LIMIT`, when given), then every frame; returns what stops it.

        `watcher` is called on the event loop and must not block or raise.
        """
        return await self._call(partial(self._join, watcher, since))

    def subscribe(self, sink: AlertSink, *, scope: Scope) -> None:
        """Hand `sink` every batch of new alerts before it is recorded, until `scope`
        closes (`dsh.AlertFeed`)."""
        scope.add(self._sinks.add(sink))

    async def settled(self) -> None:
        """Return once everything queued before this call was handled (for tests)."""
        await self._call(_nothing)

    # -- the worker --------------------------------------------------------------------

    def _submit(self, job: Job) -> None:
        if self._send is None:
            raise HostClosed("the host is not running")
        try:
            self._send.send_nowait(job)
        except anyio.ClosedResourceError:
            raise HostClosed("the host is not running") from None

    async def _call(self, job: Callable[[], Awaitable[_T]]) -> _T:
        """Run `job` in the worker, in turn; its result or its exception."""
        done = anyio.Event()
        outcome: list[_T] = []
        failure: list[BaseException] = []

        async def run() -> None:
            try:
                outcome.append(await job())
            except Exception as error:
                failure.append(error)
            finally:
                done.set()

        self._submit(run)
        await done.wait()
        if failure:
            raise failure[0]
        return outcome[0]

    async def _work(self, jobs: MemoryObjectReceiveStream[Job]) -> None:
        try:
            async with jobs:
                async for job in jobs:
                    await job()
        finally:
            self._drained.set()

    def _offer(self, job: Job) -> None:
        """Queue `job` unless the worker stopped (closing: what a derivation would have
        found, the next resume finds from the store's `checked`)."""
        with contextlib.suppress(HostClosed):
            self._submit(job)

    def _observe(self, observation: Observation) -> None:
        if isinstance(observation, SessionFlushed):
            session, through = observation.session, observation.through
            # A barrier with nothing new to store (a reminder's preflight) flushes again
            # what was looked at already: no job, and no worker woken, between two
            # dispatches of a storm.
            if through > self._looked.get(session, -1):
                self._offer(partial(self._derive, session, through, 0))

    def _heard(self, session_id: str, seqs: Sequence[int]) -> None:
        self._offer(partial(self._changed, session_id, seqs))

    # -- jobs ------------------------------------------------------------------------

    async def _derive(self, session: Session, through: int, attempt: int) -> None:
        """Find and keep the alerts of `session`'s events up to `through`, then announce them.

        Background work: it waits while the host does urgent work (a storm's dispatches)."""
        await self._background.yield_to_urgent()
        try:
            start = self._looked.get(session)
            if start is None:
                checked = await self.backend.checked(session.id)
                if checked is None:  # never seen: its past is not news
                    await self.backend.record(session.id, (), through)
                    self._looked[session] = through
                    return
                start = max(checked, session.fold_start)
            alerts = self._alerts(session, start, through)
            if alerts:
                await self._hand_over(alerts)
            count = await self.backend.record(session.id, alerts, through) if alerts else None
        except StorageError as error:
            self._later(session, through, attempt, error)
            return
        self._looked[session] = max(start, through)
        for alert in alerts:
            self._announce(alert)
        if count is not None:
            self._count(session.id, count)

    def _alerts(self, session: Session, start: int, through: int) -> list[Alert]:
        durable = session.prefix(through)
        found = []
        for event in session.scan(start, through):
            if event.type in HOST_EVENT_TYPES:
                continue
            content = self._alert_of(durable, event)
            if content is not None:
                found.append(Alert.of(session.id, event.seq, event.time, content))
        return found

    async def _hand_over(self, alerts: Sequence[Alert]) -> None:
        """Give the subscribed sinks `alerts`; a `StorageError` is the caller's (try later)."""
        for sink in list(self._sinks):
            try:
                await sink(alerts)
            except StorageError:
                raise
            except Exception:
                log.exception("an alert sink (%r) failed; its alerts are recorded anyway", sink)

    def _later(self, session: Session, through: int, attempt: int, error: Exception) -> None:
        delay = self._retry.delay(attempt)
        log.warning(
            "cannot keep the alerts of session %s in %s (%s); trying again in %.1f s",
            session.id, self.backend.description, error, delay,
        )  # fmt: skip
        assert self._group is not None

        async def again() -> None:
            await self._live.clock.sleep(delay)
            self._offer(partial(self._derive, session, through, attempt + 1))

        self._group.start_soon(again, name=f"attention retry {session.id}")

    async def _changed(self, session_id: str, seqs: Sequence[int]) -> None:
        """Another host (or this one, heard back) changed the Session's attention."""
        fresh = [seq for seq in seqs if (session_id, seq) not in self._announced]
        try:
            alerts = await self.backend.alerts(session_id, fresh) if fresh else []
            count = (await self.backend.unread([session_id])).get(session_id, 0)
        except StorageError as error:
            log.warning("cannot read a change of session %s's alerts: %s", session_id, error)
            return
        for alert in alerts:
            self._announce(alert)
        self._count(session_id, count)

    async def _read(self, session_id: str, through: int) -> int:
        count = await self.backend.read(session_id, through)
        self._count(session_id, count)
        return count

    async def _forget(self, session_id: str) -> None:
        await self.backend.forget(session_id)
        self._count(session_id, 0)
        self._counts.pop(session_id, None)

    async def _join(self, watcher: Watcher, since: int | None) -> Disposer:
        counts = await self.backend.unread()
        replay = [] if since is None else await self.backend.since(since, REPLAY_LIMIT)
        hello: Frame = {"kind": "hello", "unread": dict(sorted(counts.items()))}
        watcher(hello)
        for alert in replay:
            watcher(alert.to_frame())
        return self._watchers.add(watcher)

    # -- telling the watchers ------------------------------------------------------------

    def _announce(self, alert: Alert) -> None:
        key = (alert.session_id, alert.seq)
        if key in self._announced:
            return
        self._announced[key] = None
        while len(self._announced) > ANNOUNCED_KEEP:
            self._announced.popitem(last=False)
        self._tell(alert.to_frame())

    def _count(self, session_id: str, count: int) -> None:
        if self._counts.get(session_id) == count:
            return
        self._counts[session_id] = count
        self._tell(unread_frame(session_id, count))

    def _tell(self, frame: Frame) -> None:
        for watcher in self._watchers:
            try:
                watcher(frame)
            except Exception:
                log.exception("an attention watcher failed on %s", frame.get("kind"))


async def _nothing() -> None:
    return None
