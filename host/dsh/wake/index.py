"""The wake index: when each cold Session next needs to be live, and waking it then.

DESIGN §7 "Waking cold Sessions". For every stored Session that is not
live, the index holds the earliest time any plugin's `dsh_session_wake_at`
answered when it went cold (a `WakeEntry`), and one `WakeTimer` arms them
all. Shortly before that time (`LEAD_SECONDS`) the Session is made live
exactly as a resume does (`Host.resume`, which publishes its root agent), and
the plugin's owner delivers what is due at the time itself. A small, fixed
pool of wake workers does the resumes (`workers`), so ten thousand overdue
Sessions after a restart are not ten thousand tasks.

**Never the authority.** An early, stale or duplicate entry only resumes a
Session that then finds nothing due (and may hibernate again); a Session
that cannot be woken (storage failing) is retried with a growing delay; one
that is no longer stored leaves the index. The durable copy (`WakeBackend`) is
written so that a crash at any point leaves an index that wakes every
Session that might need it:

1. **Going live** (`going_live`, before the agent is published, so before
   any tool can create a reminder): unless the stored entry already wakes
   the Session at once after a crash (its time has passed), the entry is
   marked *dirty* and that mark is durable before the Session goes live.
2. **Going cold** (`gone_cold`, after the agent closed and its last events
   were stored, before the close completes): the entry becomes what the
   plugins answer for the stored log, clean. A close whose last writes
   failed is derived from storage instead, or left dirty.
3. **Start-up** (`start`) reads the stored index and arms it at once; dirty
   entries (Sessions that were live when the host died) are derived again
   from their logs in the background. A missing, unreadable, corrupt or
   other-version index is rebuilt from every log (`Backend.list`), also in
   the background, and written as a whole once done; until then nothing is
   appended (there is no usable index to append to, so a crash meanwhile
   rebuilds again). The rebuild is a warning, except in a new store (no
   index was ever written and there are no logs): that is only INFO.
4. **A failed write** makes the stored index unusable (`WakeBackend.discard`)
   before anyone proceeds, so the next start rebuilds from the logs; the
   next write is then a whole snapshot. Only if even that fails does the
   operation waiting for it fail (`WakeIndexUnavailable`).

5. **A shared store** (`WakeBackend.shared`: PostgreSQL, several hosts) is
   never rewritten whole and its dirty entries are not derived at start
   (they may be Sessions live on other hosts). Instead, every
   `sweep_seconds` the index asks it which entries are due soon, or dirty,
   among the Sessions no host holds (`WakeBackend.due`): due ones are armed
   like its own, dirty ones (a dead host's, once its lease expired) are
   woken at once. Before waking, a host claims the entry
   (`WakeBackend.claim`), so exactly one host wakes each Session.

Writes are group-committed: everything recorded while one write is under
way goes into the next, so a shutdown closing a thousand Sessions writes a
handful of batches.

**A storm** (many entries due in the same second) is woken ahead of the
lead, by as much as the workers need to make that second's Sessions live at
the rate this host's own recent resumes sustained (`dsh.wake.ahead`); the
Sessions woken early stay live until their lead begins (`lead_for`), and
their owners still deliver at each reminder's own time. At most
`ahead.cap` Sessions are live ahead of their plain lead at once; one more
waits for its plain lead (`WakeAhead.admit`).
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..base.backoff import Backoff
from ..base.clock import Clock
from ..persistence.errors import SessionNotFound
from .ahead import WakeAhead
from .backend import Change, LoadedIndex, WakeBackend, WakeEntry
from .errors import WakeBackendError, WakeIndexUnavailable
from .timer import WakeTimer

__all__ = ["WakeHost", "WakeIndex", "WakeIndexUnavailable"]

log = logging.getLogger(__name__)

DEFAULT_WORKERS = 8
# Making a cold Session live (read its log, store its end-seed marker, publish
# its agent, fold its plugins) costs tens of milliseconds, far more than a live
# owner's dispatch (about a millisecond). So a Session is woken this long
# before its time, and its owner then delivers at the time itself, as it does
# for any live Session: lateness is the live path's, and a burst of wakes has
# this much slack. Early is allowed: the index is never the authority.
LEAD_SECONDS = 2.0
_SNAPSHOT = ""  # a queued "change" that only asks for a snapshot (never a Session id)
RETRY_FIRST_SECONDS = 5.0
RETRY_MAX_SECONDS = 600.0


class WakeHost(Protocol):
    """What the index needs from its Host (`dsh.wake.lifecycle` adapts a `Host`)."""

    def is_live(self, session_id: str) -> bool:
        """True while the Session is live (or being made live) in this host."""
        ...

    async def resume(self, session_id: str) -> None:
        """Make the Session live as a resume does; `SessionNotFound` if it is not stored."""
        ...

    async def derive(self, session_id: str) -> int | None:
        """`dsh_session_wake_at` of the stored log; `SessionNotFound` if it is not stored."""
        ...

    async def stored_ids(self) -> list[str]:
        """Every stored Session id (for a rebuild)."""
        ...


@dataclass(eq=False)
class _Round:
    """The waiters of one group-committed write."""

    done: anyio.Event = field(default_factory=anyio.Event)
    error: WakeIndexUnavailable | None = None


class WakeIndex:
    """The host's wake index (see the module docstring)."""

    def __init__(
        self,
        backend: WakeBackend,
        host: WakeHost,
        *,
        clock: Clock,
        workers: int = DEFAULT_WORKERS,
        retry_first: float = RETRY_FIRST_SECONDS,
        retry_max: float = RETRY_MAX_SECONDS,
        lead_seconds: float = LEAD_SECONDS,
        ahead: WakeAhead | None = None,
    ) -> None:
        self.backend = backend
        self.lead_ms = round(lead_seconds * 1000)
        """How long before its time a lone Session is woken (see `LEAD_SECONDS`)."""
        self.ahead = ahead or WakeAhead()
        """The measured resume rate and the storm's extra lead (`lead_for`)."""
        self._host = host
        self._clock = clock
        self._workers = workers
        self._retry = Backoff(retry_first, retry_max)
        self._entries: dict[str, WakeEntry] = {}
        self._by_second: dict[int, set[str]] = {}  # entries by their wake time's second
        self._resuming = 0
        self._live: set[str] = set()
        self._timer = WakeTimer(clock, self._on_due)
        self._due_ids: set[str] = set()
        # Made in `start` and closed in `aclose`: an unclosed stream is a ResourceWarning.
        self._due: tuple[MemoryObjectSendStream[str], MemoryObjectReceiveStream[str]] | None = None
        self._retries: dict[str, int] = {}  # failed wakes in a row, by Session
        # The stored copy: rebuilding (no usable copy yet) or needing a whole snapshot.
        self._rebuilding = False
        self._needs_snapshot = False
        self._touched: set[str] | None = None
        self._queue: list[Change] = []
        self._round = _Round()
        self._inflight: _Round | None = None
        self._writer_wake = anyio.Event()
        self._waking: list[anyio.CancelScope] = []
        self._writer: anyio.CancelScope | None = None
        self._writer_done = anyio.Event()
        self.ready = anyio.Event()
        """Set once every entry is known (after a rebuild or the re-derivation of dirty ones)."""
        self.woken = 0
        self.rebuilt: bool | None = None
        """After `start`: True when the stored index could not be used and was rebuilt."""

    # -- reading ------------------------------------------------------------

    def entry(self, session_id: str) -> WakeEntry | None:
        return self._entries.get(session_id)

    def entries(self) -> dict[str, WakeEntry]:
        return dict(self._entries)

    def overdue(self) -> int:
        """How many closed Sessions' wake times have passed without their being woken (a
        wake in progress, or one retrying after a failure: what `/metrics` shows)."""
        now = self._clock.wall_ms()
        return sum(
            1
            for session_id, entry in self._entries.items()
            if entry.wake_at is not None and entry.wake_at <= now and session_id not in self._live
        )

    def lead_for(self, wake_at: int) -> int:
        """How long before `wake_at` its Session is woken (ms): the lead, and for a
        crowded second the time the workers need for it (`WakeAhead.extra_ms`)."""
        return self.lead_ms + self.ahead.extra_ms(len(self._by_second.get(wake_at // 1000, ())))

    def armed_at(self, session_id: str) -> int | None:
        """When the timer will wake `session_id` (its wake time less the lead), or None."""
        return self._timer.at(session_id)

    @property
    def armed(self) -> int:
        return len(self._timer)

    # -- lifecycle ----------------------------------------------------------

    async def start(self, group: TaskGroup) -> None:
        """Load the stored index, arm it, and start the timer, the workers and the writer.

        Dirty entries are derived again, and an unusable index rebuilt, in
        the background (`ready` is set when that is done); a new store (no
        index, no logs) gets its empty index before this returns.
        """
        loaded = await self.backend.load()
        self._due = anyio.create_memory_object_stream[str](math.inf)
        self._writer = anyio.CancelScope()
        group.start_soon(self._write_forever, self._writer, name="wake index writer")
        group.start_soon(self._wake_forever, self._scope(), name="wake index timer")
        if loaded.problem is not None:
            await self._start_rebuild(group, loaded)
            return
        self.rebuilt = False
        for session_id, entry in loaded.entries.items():
            self._put(session_id, entry)  # every second's count first, then arm with it
        for session_id, entry in self._entries.items():
            self._arm(session_id, entry)
        if self.backend.sweep_seconds is not None:
            group.start_soon(self._sweep_forever, self._scope(), name="wake index sweep")
        dirty = [session_id for session_id, entry in self._entries.items() if entry.dirty]
        if self.backend.shared:
            # Another host's live Session, or a dead host's: the sweep hands over the
            # ones no host holds (rule 5). Their logs are not this host's to derive.
            dirty = []
        if not dirty:
            self.ready.set()
            return
        log.info("wake index: deriving %d Sessions that were live at a crash again", len(dirty))
        self._touched = set()
        group.start_soon(self._rederive, self._scope(), dirty, name="wake index re-derive")

    async def _start_rebuild(self, group: TaskGroup, loaded: LoadedIndex) -> None:
        """Rebuild an unusable index in the background, a new store's empty one at once."""
        self.rebuilt = self._rebuilding = True
        self._touched = set()
        ids: list[str] | None = None
        if loaded.missing:
            # Listing first tells a new store (nothing to warn about, and nothing to derive:
            # done before start-up ends, so no line follows the host's address) from logs
            # that lost their index.
            ids = await self._stored_ids()
            if ids is None:
                return
            if not ids:
                log.info("%s; starting an empty one (no Session logs yet)", loaded.problem)
                await self._rebuild(self._scope(), ids)
                return
            log.warning("%s; rebuilding it from the %d Session logs", loaded.problem, len(ids))
        else:
            log.warning("%s; rebuilding it from the Session logs", loaded.problem)
        group.start_soon(self._rebuild, self._scope(), ids, name="wake index rebuild")

    def _scope(self) -> anyio.CancelScope:
        scope = anyio.CancelScope()
        self._waking.append(scope)
        return scope

    def stop_waking(self) -> None:
        """Wake nothing more (the host is closing); recording goes on until `aclose`."""
        for scope in self._waking:
            scope.cancel()

    async def aclose(self) -> None:
        """Write what is queued, compact the stored copy when it is usable, and stop."""
        self.stop_waking()
        try:
            await self._sync()
            if not self._rebuilding and not self.backend.shared:
                await self._snapshot()
        except WakeIndexUnavailable as error:
            log.error("%s", error)
        finally:
            if self._writer is not None:
                self._writer.cancel()
                await self._writer_done.wait()
            await self.backend.aclose()

    # -- the two transitions ------------------------------------------------------

    async def going_live(self, session_id: str) -> None:
        """Before `session_id` goes live: make sure a crash while it is live wakes or
        re-derives it (module docstring, rule 1). Raises `WakeIndexUnavailable`."""
        self._touch(session_id)
        self._live.add(session_id)
        self._timer.disarm(session_id)
        entry = self._entries.get(session_id)
        if (
            entry is not None
            and not self.backend.shared  # there, this host's copy of the entry may be stale
            and (
                entry.dirty
                or (entry.wake_at is not None and entry.wake_at <= self._clock.wall_ms())
            )
        ):
            await self._sync()  # that entry may still be on its way to storage
            return
        await self._record([(session_id, WakeEntry(entry.wake_at if entry else None, True))])

    def did_not_go_live(self, session_id: str) -> None:
        """`going_live` was called but the Session did not go live after all: arm it again."""
        self._live.discard(session_id)
        entry = self._entries.get(session_id)
        if entry is not None:
            self._arm(session_id, entry)

    async def gone_cold(self, session_id: str, wake_at: int | None, *, known: bool) -> None:
        """After `session_id` went cold: record `wake_at` (what its stored log says), or,
        unless `known`, keep it dirty for a later derivation. Raises `WakeIndexUnavailable`
        (the in-memory entry and the timer are right either way)."""
        self._touch(session_id)
        self._live.discard(session_id)
        self._retries.pop(session_id, None)
        previous = self._entries.get(session_id)
        entry = (
            WakeEntry(wake_at)
            if known
            else WakeEntry(previous.wake_at if previous else None, dirty=True)
        )
        self._put(session_id, entry)  # counted in its second before it is armed
        self._arm(session_id, entry)
        await self._record([(session_id, entry)])

    # -- waking -------------------------------------------------------------------

    def _arm(self, session_id: str, entry: WakeEntry) -> None:
        if entry.wake_at is None or session_id in self._live:
            self._timer.disarm(session_id)
        else:
            self._timer.arm(session_id, entry.wake_at - self.lead_for(entry.wake_at))

    def _put(self, session_id: str, entry: WakeEntry) -> None:
        """Set (or, when `entry` is empty, drop) `session_id`'s entry in memory."""
        previous = self._entries.get(session_id)
        if previous is not None and previous.wake_at is not None:
            second = previous.wake_at // 1000
            crowd = self._by_second[second]  # every entry with a time is in its second's
            crowd.discard(session_id)
            if not crowd:
                del self._by_second[second]
        if entry.empty:
            self._entries.pop(session_id, None)
            return
        self._entries[session_id] = entry
        if entry.wake_at is not None:
            self._by_second.setdefault(entry.wake_at // 1000, set()).add(session_id)

    def _rearm_crowded(self) -> None:
        """Arm again, with today's rate, every armed Session that shares its second."""
        for crowd in self._by_second.values():
            if len(crowd) < 2:
                continue
            for session_id in crowd:
                if session_id in self._timer and session_id not in self._retries:
                    self._arm(session_id, self._entries[session_id])

    def _on_due(self, session_ids: list[str]) -> None:
        assert self._due is not None  # the timer runs only after `start`
        for session_id in session_ids:
            if session_id not in self._due_ids:
                self._due_ids.add(session_id)
                self._due[0].send_nowait(session_id)

    async def _wake_forever(self, scope: anyio.CancelScope) -> None:
        assert self._due is not None
        try:
            with scope:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._timer.run, name="wake timer")
                    for number in range(self._workers):
                        group.start_soon(self._work, name=f"wake worker {number}")
        finally:
            for stream in self._due:
                stream.close()

    async def _work(self) -> None:
        assert self._due is not None
        async for session_id in self._due[1]:
            try:
                await self._wake(session_id)
            finally:
                self._due_ids.discard(session_id)

    async def _wake(self, session_id: str) -> None:
        entry = self._entries.get(session_id)
        if entry is None or (entry.wake_at is None and not entry.dirty):
            return  # it changed since it was armed
        if self._host.is_live(session_id):
            return  # a person made it live first
        if entry.wake_at is not None:
            plain_ms, now = entry.wake_at - self.lead_ms, self._clock.wall_ms()
            if plain_ms > now and not self.ahead.admit(session_id, plain_ms, now):
                # As many are live ahead of their lead as memory allows: this one
                # waits for its own plain lead.
                self._timer.arm(session_id, plain_ms)
                return
        # A wake costs its claim too (a round trip on a shared store): the rate the
        # storm is planned with counts it (`WakeAhead.observe`).
        began, running = self._clock.wall_ms(), self._resuming + 1
        self._resuming = running
        try:
            if not await self.backend.claim(session_id):
                return  # another host wakes it
            await self._host.resume(session_id)
        except SessionNotFound:
            log.info("wake index: session %s is no longer stored; forgetting it", session_id)
            self._put(session_id, WakeEntry())
            await self._record_quietly([(session_id, WakeEntry())])
            return
        except Exception as error:
            failures = self._retries.get(session_id, 0)
            delay = self._retry.delay(failures)
            self._retries[session_id] = failures + 1
            log.warning(
                "wake index: could not wake session %s (%s: %s); trying again in %g s",
                session_id,
                type(error).__name__,
                error,
                delay,
            )
            if not self._host.is_live(session_id):
                self._timer.arm(session_id, self._clock.wall_ms() + round(delay * 1000))
            return
        finally:
            self._resuming -= 1
        self._retries.pop(session_id, None)
        self.woken += 1
        self.ahead.observe((self._clock.wall_ms() - began) / 1000, running)
        if self.ahead.replan():
            self._rearm_crowded()

    async def _sweep_forever(self, scope: anyio.CancelScope) -> None:
        """Rule 5: hand what other hosts left due (or dirty, and no host holds) to the
        timer, every `sweep_seconds`, looking one period and the lead ahead."""
        assert self.backend.sweep_seconds is not None
        period = self.backend.sweep_seconds
        failing = False
        with scope:
            while True:
                now = self._clock.wall_ms()
                try:
                    found = await self.backend.due(now + self.lead_ms + round(period * 1000))
                except WakeBackendError as error:
                    if not failing:
                        log.warning("wake index: %s; sweeping again every %g s", error, period)
                    failing = True
                else:
                    if failing:
                        log.info("wake index: %s can be swept again", self.backend.description)
                    failing = False
                    self._adopt(found, now)
                await self._clock.sleep(period)

    def _adopt(self, found: list[Change], now: int) -> None:
        for session_id, entry in found:
            if session_id in self._live or session_id in self._due_ids:
                continue  # this host's own, or being woken already
            self._put(session_id, entry)
            if entry.dirty:
                # Nobody holds it, yet it may hold reminders only its log knows: make it
                # live now (its plugins' owners deliver what is due, then it goes cold).
                self._timer.arm(session_id, now)
            else:
                self._arm(session_id, entry)

    # -- deriving entries from the logs ---------------------------------------------

    async def _stored_ids(self) -> list[str] | None:
        """Every stored Session's id; None (logged, `ready` set) when they cannot be listed."""
        try:
            return await self._host.stored_ids()
        except Exception as error:
            # Nothing is written meanwhile, so the next start tries again.
            log.error("wake index: cannot list the stored Sessions to rebuild it: %s", error)
            self.ready.set()
            return None

    async def _rebuild(self, scope: anyio.CancelScope, ids: list[str] | None) -> None:
        """Derive every stored log's entry (`ids`, else listed now) and store them whole."""
        with scope:
            if ids is None:
                ids = await self._stored_ids()
                if ids is None:
                    return
            derived = await self._derive_many(ids)
            for session_id, entry in derived:
                self._put(session_id, entry)
            self._rebuilding = False
            self._touched = None
            try:
                await self._snapshot()
            except WakeIndexUnavailable as error:
                log.error("%s", error)
            if ids:  # a new store's empty index has been announced already
                log.info("wake index: rebuilt from %d Session logs", len(ids))
            self.ready.set()

    async def _rederive(self, scope: anyio.CancelScope, ids: list[str]) -> None:
        with scope:
            derived = await self._derive_many(ids)
            self._touched = None
            await self._record_quietly(derived)
            self.ready.set()

    async def _derive_many(self, ids: Iterable[str]) -> list[Change]:
        """Derive each id's entry from its log, with `workers` reads at a time; ids that
        went live or cold meanwhile are left as the transitions made them."""
        pending = deque(ids)
        derived: list[Change] = []

        async def worker() -> None:
            while pending:
                session_id = pending.popleft()
                entry = await self._derive(session_id)
                if self._touched is not None and session_id in self._touched:
                    continue
                derived.append((session_id, entry))
                self._put(session_id, entry)
                self._arm(session_id, entry)

        async with anyio.create_task_group() as group:
            for _ in range(self._workers):
                group.start_soon(worker)
        self._rearm_crowded()  # each was armed with its second's count so far
        return derived

    async def _derive(self, session_id: str) -> WakeEntry:
        try:
            return WakeEntry(await self._host.derive(session_id))
        except SessionNotFound:
            return WakeEntry()
        except Exception as error:
            log.warning(
                "wake index: cannot read session %s (%s); it stays to be derived at the next start",
                session_id,
                error,
            )
            previous = self._entries.get(session_id)
            return WakeEntry(previous.wake_at if previous else None, dirty=True)

    def _touch(self, session_id: str) -> None:
        if self._touched is not None:
            self._touched.add(session_id)

    # -- the stored copy ------------------------------------------------------------

    async def _record(self, changes: list[Change]) -> None:
        """Apply `changes` in memory and return once storage holds them (module docstring)."""
        for session_id, entry in changes:
            self._put(session_id, entry)
        if self._rebuilding:
            return  # no usable stored index: a crash now rebuilds from the logs anyway
        self._queue.extend(changes)
        await self._sync()

    async def _record_quietly(self, changes: list[Change]) -> None:
        try:
            await self._record(changes)
        except WakeIndexUnavailable as error:
            log.error("%s", error)

    async def _sync(self) -> None:
        """Wait until everything queued so far is stored (or the copy made unusable)."""
        if self._writer_done.is_set() or self._writer is None:
            # The writer stopped (or never started): the caller writes its own round.
            while self._queue:
                ticket = await self._write_round()
                if ticket.error is not None:
                    raise ticket.error
            return
        if self._queue:
            ticket = self._round
            self._writer_wake.set()
        elif self._inflight is not None:
            ticket = self._inflight
        else:
            return
        await ticket.done.wait()
        if ticket.error is not None:
            raise ticket.error

    async def _write_forever(self, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                while True:
                    await self._writer_wake.wait()
                    self._writer_wake = anyio.Event()
                    while self._queue:
                        await self._write_round()
        finally:
            self._writer_done.set()

    async def _write_round(self) -> _Round:
        changes = [change for change in self._queue if change[0] != _SNAPSHOT]
        ticket, self._round = self._round, _Round()
        snapshot, self._needs_snapshot = self._needs_snapshot, False
        self._queue, self._inflight = [], ticket
        try:
            if snapshot:
                await self.backend.replace(self._entries)
            else:
                await self.backend.write(changes)
        except WakeBackendError as error:
            try:
                await self._give_up_copy(error)
            except WakeIndexUnavailable as unavailable:
                ticket.error = unavailable
        finally:
            self._inflight = None
            ticket.done.set()
        return ticket

    async def _snapshot(self) -> None:
        """Write every entry as one snapshot (through the writer, after what is queued)."""
        self._needs_snapshot = True
        self._queue.append((_SNAPSHOT, WakeEntry()))
        await self._sync()

    async def _give_up_copy(self, error: WakeBackendError) -> None:
        try:
            await self.backend.discard()
        except WakeBackendError as second:
            raise WakeIndexUnavailable(
                f"{error}; and the stale copy could not be removed either ({second}): "
                "run `dsh index rebuild` before the next start"
            ) from error
        log.error(
            "%s; the stored copy was removed (the next start rebuilds it from the logs) "
            "and the next change rewrites it whole",
            error,
        )
        self._needs_snapshot = True
