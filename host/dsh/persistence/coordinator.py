"""The persistence coordinator: one write path per live Session (DESIGN §4).

`PersistenceCoordinator.attach(session, seed_end=…)` registers a controller as
a listener of the live Session (`LiveSessions.add_listener`). The controller
writes eagerly and acknowledges durability only for what the backend has confirmed:

1. Its queue is the Session itself: everything from the confirmed cursor to
   the end of the append-only log. `on_append` only wakes the writer; nothing
   is copied, and a failed batch is "retained" simply because the confirmed
   cursor did not move.
2. Writing is eager but holds no task while there is nothing to write: an
   append asks the coordinator's one *starter* task for the Session's writer,
   and on its next pass (one loop iteration later, after the tasks the same
   append woke: the live-stream senders, whose frames so go out before the
   fsync) the starter starts that writer task unless a writer or a flush is
   writing the Session by then — a flush that follows its appends at once
   writes them itself, and no task is started for nothing. The writer writes
   everything pending as one batch (one backend call) — events appended
   meanwhile form the next — and ends when nothing is left (or keeps
   retrying, see 5). A flush writes inline instead when no writer is busy,
   and never waits for more than two batches. An idle Session therefore
   costs no task and no event object; the starter lives until `aclose()`.
3. The first write creates the Session in storage with exactly the immutable
   prefix `[0, seed_end)` (the controller keeps only that scalar). If storage
   already holds the id — a resumed Session, or an earlier creation whose
   acknowledgement was lost — the controller proves the stored log is this
   Session's prefix (same header identity, equal events) and continues from its
   cursor; a different log under the same id is a `DivergedLog`, never
   overwritten or extended. A resume that built the Session from the very
   events storage returned passes that read's mark (`StoredSession.mark`, as
   `stored`) and so has already made that proof: the controller starts from
   it, created, with `[0, seed_end)` confirmed, and asks storage nothing.
4. **Recovery compares content.** After a failed write the outcome is unknown
   (a commit may have succeeded and its acknowledgement failed), so the next
   attempt asks the backend for its `mark` and reads back what it holds
   beyond the confirmed cursor: only events equal to the live ones are
   confirmed, and only the missing suffix is written. A count that matches is
   never enough. If the log's incarnation changed since the controller last
   proved it (it was rewritten or replaced), the whole stored log is compared
   again. Anything that differs is a `DivergedLog` (`prefix`: the proofs).
5. **Retries on its own.** After a failure the writer retries with bounded
   exponential backoff (`Backoff`, on the coordinator's clock) until the
   write succeeds or the Session is detached; a `flush` retries at once. An
   *episode* of failures is logged once when it starts and once when it
   ends, never per attempt. A `DivergedLog` or a `LeaseLost` (another host
   owns the Session now) is not retried in the background: nothing would
   change it.
8. **A refusal is not a failure.** A `StorageRefused` batch (storage can
   never hold one of its events as it is) is written again one event at a
   time, so every event before the refused one is stored and confirmed;
   then writing stops for good (retrying the same event meets the same
   refusal, and no later event can be stored past it), the flushes waiting
   for it raise the refusal, and the coordinator's `on_refused(session_id)`
   runs in its own task: the Host closes the Session, which continues from
   its stored log when next used. Nothing acknowledged is lost — an event
   is acknowledged only once stored — and no other Session is held up.
6. `flush` returns True only once storage holds the Session and every event
   before the flush's boundary (`len(session)` at entry) is confirmed; it
   raises `StorageError` if a write attempt that started after it was
   called fails. It never returns False: this listener either acknowledges
   or raises. An attempt already in flight when the flush was called (the
   writer's eager batch, or its retry) answers for itself: if it fails, the
   flush retries at once, since it is the next flush of that failed batch.
   So a flush called once storage works again succeeds even while an attempt
   that met the old fault is still finishing.
7. **Detaching** makes a final attempt and keeps retrying for at most
   `close_retry_seconds` (of backoff) before giving up; the events it could
   not store are named in the `StorageError` it raises. `abandon` detaches
   without writing anything more (a creation answered with an error).

`unconfirmed()` reports the Sessions in a failure episode that hold events
storage has not confirmed: what `/api/health` calls degraded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass

import anyio
from anyio.abc import TaskGroup

from ..base.backoff import Backoff
from ..base.clock import Clock, SystemClock
from ..base.errors import raise_errors
from ..base.scope import Disposer
from ..base.tasks import TaskSet
from ..session.event import SessionEvent
from ..session.ids import validate_session_id
from ..session.live import LiveSessions
from ..session.log import Session
from .backend import Backend, LogMark, StoredSession, StoredSummary
from .errors import (
    CoordinatorClosed,
    DivergedLog,
    LeaseLost,
    SessionExists,
    StorageError,
    StorageRefused,
)
from .prefix import adopt, verify

__all__ = [
    "WRITE_BACKOFF",
    "PersistenceCoordinator",
    "Unconfirmed",
]

log = logging.getLogger(__name__)


#: How long a Session's writer waits before retry `n`: 0.1 s, doubling, at most 5 s.
WRITE_BACKOFF = Backoff(first=0.1, cap=5.0)


@dataclass(frozen=True, slots=True)
class Unconfirmed:
    """A Session whose writes are failing: events `[first, end)` are not confirmed stored
    (`first` is 0 while its creation is not confirmed). `attempts` failed so far."""

    session_id: str
    first: int
    end: int
    attempts: int
    error: str

    @property
    def count(self) -> int:
        return self.end - self.first


class PersistenceCoordinator:
    """Keeps one controller per attached live Session and reads cold ones.

    Writer tasks run in `group` (through a `TaskSet`), so they belong to the
    owner of that group; `aclose()` stops every one of them. `clock` times
    the retries (`backoff`); `close_retry_seconds` bounds how long detaching
    a Session keeps retrying; `on_refused(session_id)` is started (as a task
    of `group`) once a Session's writing stopped on a `StorageRefused` (rule 8);
    `append_seconds(seconds)` is told how long each `Backend.append` took.
    """

    def __init__(
        self,
        live: LiveSessions,
        backend: Backend,
        group: TaskGroup,
        *,
        clock: Clock | None = None,
        backoff: Backoff | None = None,
        close_retry_seconds: float = 0.0,
        on_refused: Callable[[str], Awaitable[None]] | None = None,
        append_seconds: Callable[[float], None] | None = None,
    ) -> None:
        self.live = live
        self.on_refused = on_refused
        self.append_seconds = append_seconds
        self.backend = backend
        self.clock: Clock = clock or SystemClock()
        self.backoff = backoff or WRITE_BACKOFF
        self.close_retry_seconds = close_retry_seconds
        self._tasks = TaskSet(group, "persistence")
        self._controllers: dict[Session, _Controller] = {}
        self._closed = False
        # Rule 2: the controllers whose appends asked for a writer since the starter's
        # last pass, and the event that wakes it (None unless it waits for one).
        self._wanting: list[_Controller] = []
        self._wake_starter: anyio.Event | None = None
        self._starter_running = False

    def attach(
        self, session: Session, *, seed_end: int, stored: LogMark | None = None
    ) -> Callable[[], Awaitable[None]]:
        """Persist `session` from now on; returns the (async) `Disposer` that detaches it.

        `seed_end` is the length of the immutable prefix the Session was built
        with: 0 for a new Session, `header.seed_length` for a fork, the stored
        length for a resume. Storage is created (or, if it exists, proven to
        be this Session's prefix) eagerly, then every append is written.
        `stored` is for a resume only: the mark of the very read, under the
        Session's lease, that the Session was built from (`StoredSession.mark`,
        counting exactly those `seed_end` events; rule 3 of the module
        docstring); the prefix is then not proven again.

        Raises `SessionClosed` if `session` is not live,
        `ValueError` if it is attached already, `seed_end` is out of range or
        `stored` counts other than `seed_end` events, `CoordinatorClosed`
        after `aclose()`.
        """
        if self._closed:
            raise CoordinatorClosed("the persistence coordinator is closed")
        if session in self._controllers:
            raise ValueError(f"session {session.id} is already attached to persistence")
        if not 0 <= seed_end <= len(session):
            raise ValueError(
                f"session {session.id}: seed_end {seed_end} is outside [0, {len(session)}]"
            )
        if stored is not None and stored.length != seed_end:
            raise ValueError(
                f"session {session.id}: the stored mark counts {stored.length} events, "
                f"not the {seed_end} it was built from"
            )
        controller = _Controller(session, self, seed_end)
        if stored is not None:
            controller.proven(stored)
        controller.stop_listening = self.live.add_listener(session, controller)
        self._controllers[session] = controller
        controller.start_writer()  # create, adopt or extend the stored log eagerly
        return controller.detach

    async def abandon(self, session: Session) -> None:
        """Detach `session` without writing anything more (its creation failed).

        Whatever storage already holds stays; the caller decides what to do
        with it.
        """
        controller = self._controllers.pop(session, None)
        if controller is not None:
            await controller.close(retry_seconds=0.0, write=False)

    def _want_writer(self, controller: _Controller) -> bool:
        """Have `controller`'s writer started on the starter's next pass (rule 2); False
        once the coordinator's tasks are closed (no writer can start any more)."""
        if self._tasks.closed:
            return False
        self._wanting.append(controller)
        if self._wake_starter is not None:
            self._wake_starter.set()
            self._wake_starter = None
        elif not self._starter_running:
            self._starter_running = True
            self._tasks.start_soon(self._start_writers, name="persistence writer starter")
        return True

    async def _start_writers(self) -> None:
        """The starter (rule 2): once per loop iteration in which Sessions appended, start
        the writer of each that still needs one. It lives until `aclose()`."""
        try:
            while True:
                if not self._wanting:
                    wake = self._wake_starter = anyio.Event()
                    await wake.wait()
                wanting, self._wanting = self._wanting, []
                for controller in wanting:
                    controller.asked = False
                    controller.start_writer()
        finally:
            # Only `aclose()` ends it; a Session still in `_wanting` is served by the
            # next starter, should one ever start.
            self._starter_running = False
            self._wake_starter = None

    def is_attached(self, session: Session) -> bool:
        return session in self._controllers

    def durable_length(self, session: Session) -> int:
        """How many leading events of `session` the write path has confirmed stored.

        Only what a backend acknowledged (after its fsync) counts, so this may
        trail what a reader already finds in a file mid-write. 0 when the
        Session is not attached.
        """
        controller = self._controllers.get(session)
        return 0 if controller is None else controller.durable_length

    def unconfirmed(self) -> list[Unconfirmed]:
        """Every attached Session whose writes are failing, with what is not stored."""
        found = (controller.unconfirmed() for controller in self._controllers.values())
        return [item for item in found if item is not None]

    async def read(self, session_id: str) -> StoredSession | None:
        """A cold read of what storage holds for `session_id` (None if nothing).

        Raises `InvalidSessionId` before any storage is touched.
        """
        return await self.backend.inspect(validate_session_id(session_id))

    async def list(self) -> list[StoredSummary]:
        """Every stored Session (see `Backend.list`)."""
        return await self.backend.list()

    async def aclose(self) -> None:
        """Detach every attached Session (each retrying as `detach` does), concurrently.

        Every Session is detached and every writer stopped even if some final
        flushes fail; the failures are raised afterwards (one as itself,
        several as an `ExceptionGroup`). Shielded from cancellation.
        """
        self._closed = True
        errors: list[Exception] = []

        async def detach(controller: _Controller) -> None:
            try:
                await controller.close(retry_seconds=self.close_retry_seconds)
            except Exception as error:
                errors.append(error)

        with anyio.CancelScope(shield=True):
            controllers = list(self._controllers.values())
            self._controllers.clear()
            async with anyio.create_task_group() as group:
                for controller in controllers:
                    group.start_soon(detach, controller)
            await self._tasks.aclose()
        raise_errors(errors, f"{len(errors)} sessions were detached unsaved")


class _Controller:
    """The write path of one live Session (a `SessionListener`)."""

    def __init__(self, session: Session, owner: PersistenceCoordinator, seed_end: int) -> None:
        self.session = session
        self._backend = owner.backend
        self._clock = owner.clock
        self._backoff = owner.backoff
        self._seed_end = seed_end
        self._created = False  # storage is known to hold this Session
        self._confirmed = 0  # events known to be stored (when created)
        self._incarnation: Hashable | None = None  # of the log when it was last proven
        self._in_doubt = False  # the last write failed: learn what storage holds first
        self._fault: Exception | None = None  # suspends eager writing until the retry
        self._attempts = 0  # write attempts started (numbered from 1)
        self._failed_attempt = 0  # the number of the last attempt that failed
        self._episode = 0  # failed attempts since the last success
        self._diverged = False
        self._lost: LeaseLost | None = None  # writes are fenced off for good
        self._refused: StorageRefused | None = None  # writing stopped for good (rule 8)
        self._closing = False
        self._writing = False  # a task is inside _drive()
        self._retry: anyio.CancelScope | None = None
        self._owner = owner
        # Made only when someone waits (an idle Session holds no event objects).
        self._changed: anyio.Event | None = None
        self._writer_done: anyio.Event | None = None  # set while a writer task runs
        self.asked = False  # waiting for the starter's pass (rule 2)
        self._stopped = False
        self.stop_listening: Disposer = lambda: None

    def proven(self, mark: LogMark) -> None:
        """Storage holds exactly `[0, mark.length)` of this Session, under `mark.incarnation`."""
        self._created, self._confirmed, self._incarnation = True, mark.length, mark.incarnation

    # -- SessionListener --------------------------------------------------

    @property
    def durable_length(self) -> int:
        return self._confirmed if self._created else 0

    def unconfirmed(self) -> Unconfirmed | None:
        if not self._episode:
            return None
        first = self.durable_length
        if self._created and first >= len(self.session):
            return None
        return Unconfirmed(
            self.session.id, first, len(self.session), self._episode, str(self._fault)
        )

    def on_append(self, session: Session, event: SessionEvent) -> None:
        # A writer or a flush writing now takes this event in as well (`_drive`), and a
        # Session that asked for the starter's pass already need not ask again.
        if not (self.asked or self._writing or self._writer_done is not None):
            self.asked = self._owner._want_writer(self)

    async def flush(self, session: Session) -> bool:
        boundary = len(self.session)
        # Attempts numbered above `before` are this flush's to answer for; one in flight
        # now that fails was started for an earlier need, and is retried here.
        before = self._attempts
        while not self._holds(boundary):
            if self._refused is not None:
                raise StorageRefused(self._not_stored(boundary, self._refused)) from self._refused
            if self._failed_attempt > before:
                raise StorageError(self._not_stored(boundary, self._fault)) from self._fault
            # A failed batch is retried by the next flush (this one), at once.
            self._fault = None
            if self._stopped:
                raise StorageError(
                    f"session {self.session.id}: persistence stopped before "
                    f"{self._range(boundary)} {'was' if boundary <= 1 else 'were'} stored"
                )
            if self._can_write():
                # Write in this task rather than hand over to the writer task and
                # wait for it: the hand-over costs two loop iterations per flush.
                await self._drive(until=boundary)
            else:
                await self._wait_for_change()
        return True

    async def _wait_for_change(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def _range(self, boundary: int) -> str:
        """What is unconfirmed below `boundary`, in words with real seqs."""
        first = self.durable_length
        if not self._created and first == 0 and boundary == 0:
            return "its creation"
        if boundary - first == 1:
            return f"event {first}"
        return f"events {first}–{boundary - 1}"

    def _not_stored(self, boundary: int, fault: Exception | None) -> str:
        if not self._created:
            what = "its creation" if boundary == 0 else f"its creation and {self._range(boundary)}"
            return f"session {self.session.id}: storage did not confirm {what}: {fault}"
        return (
            f"session {self.session.id}: {self._range(boundary)} "
            f"{'is' if boundary - self._confirmed == 1 else 'are'} not confirmed stored: "
            f"{fault}"
        )

    # -- the write path -----------------------------------------------------

    def start_writer(self) -> None:
        """Start the writer task unless one runs, nothing is to be done, or it is closing."""
        tasks = self._owner._tasks
        if self._writer_done is not None or self._closing or tasks.closed:
            return
        if not self._can_write() and not self._should_retry():
            return
        self._writer_done = anyio.Event()
        tasks.start_soon(self._write_eagerly, name=f"persistence writer {self.session.id}")

    async def _write_eagerly(self) -> None:
        """Write whatever is pending whenever nobody else is, retrying after a failure
        (see the module docstring); return once nothing is left to do."""
        try:
            while not self._closing:
                if self._can_write():
                    await self._drive(until=None)
                elif self._should_retry():
                    await self._wait_to_retry()
                else:
                    return
        except anyio.get_cancelled_exc_class():
            self._stopped = True  # the owner of persistence cancelled it
            raise
        finally:
            done, self._writer_done = self._writer_done, None
            if done is not None:
                done.set()
            self._notify()

    def _should_retry(self) -> bool:
        return self._fault is not None and not self._diverged and not self._closing

    async def _wait_to_retry(self) -> None:
        with anyio.CancelScope() as scope:
            self._retry = scope
            await self._clock.sleep(self._backoff.delay(self._episode - 1))
        self._retry = None
        self._fault = None

    def _pending(self) -> bool:
        """Something must be written (or learnt) and no failure is waiting for a retry."""
        unwritten = not self._created or self._in_doubt or self._confirmed < len(self.session)
        return unwritten and self._fault is None

    def _can_write(self) -> bool:
        return not self._writing and not self._closing and self._pending()

    async def _drive(self, *, until: int | None) -> None:
        """Write batches until nothing is pending, or `until` events are confirmed.

        Only one task drives at a time (the `_writing` flag; the loop is single
        threaded), so batches are written strictly one after the other.
        """
        self._writing = True
        try:
            while self._pending() and not self._closing:
                if until is not None and self._holds(until):
                    break
                await self._write_batch()
        finally:
            self._writing = False
            if self._can_write():
                self.start_writer()  # appends arrived past a flush's boundary

    def _holds(self, boundary: int) -> bool:
        return self._created and self._confirmed >= boundary

    async def _write_batch(self) -> None:
        end = len(self.session)
        self._attempts += 1
        attempt = self._attempts
        try:
            if self._lost is not None:
                raise self._lost  # another host owns the Session now: ask storage nothing
            if self._in_doubt:
                await self._reconcile(end)
            if not self._created:
                await self._create(end)
            if self._confirmed < end:
                batch = self.session.events[self._confirmed : end]
                try:
                    await self._append(batch)
                except StorageRefused:
                    if len(batch) == 1:
                        raise
                    await self._append_singly(batch)  # raises at the refused event
                self._confirmed = end
        except Exception as error:
            self._failed(error, attempt)
        except BaseException:
            self._in_doubt = True  # cancelled mid-write: it may or may not have landed
            raise
        else:
            self._recovered()
        finally:
            self._notify()

    async def _append_singly(self, batch: Sequence[SessionEvent]) -> None:
        """Store `batch` one event at a time (rule 8): what comes before a refused event
        is confirmed; the refusal is raised with the refused event's seq."""
        for event in batch:
            await self._append([event])
            self._confirmed = event.seq + 1

    async def _append(self, events: Sequence[SessionEvent]) -> None:
        started = time.perf_counter()
        try:
            await self._backend.append(self.session.id, events)
        finally:
            if self._owner.append_seconds is not None:
                self._owner.append_seconds(time.perf_counter() - started)

    def _failed(self, error: Exception, attempt: int) -> None:
        self._in_doubt = True
        self._fault = error
        self._failed_attempt = attempt
        self._episode += 1
        # None heals by retrying: the log is another one, another host owns it, or
        # storage refuses what it is given.
        self._diverged = isinstance(error, DivergedLog | LeaseLost | StorageRefused)
        if isinstance(error, StorageRefused):
            if self._refused is None:
                self._refused = error
                log.error(
                    "session %s: writing stopped at event %d, which storage refused (%s); "
                    "the session is closed and continues from its %d stored events",
                    self.session.id,
                    self._confirmed if self._created else 0,
                    error,
                    self.durable_length,
                )
                if self._owner.on_refused is not None and not self._owner._tasks.closed:
                    self._owner._tasks.start_soon(
                        self._owner.on_refused,
                        self.session.id,
                        name=f"refused writes {self.session.id}",
                    )
        elif isinstance(error, LeaseLost):
            if self._lost is None:
                log.error("session %s: writing stopped: %s", self.session.id, error)
            self._lost = error
        elif self._diverged:
            log.error("session %s: writing stopped: %s", self.session.id, error)
        elif self._episode == 1:
            log.warning(
                "session %s: persistence write failed; retrying with backoff until it "
                "is stored: %s",
                self.session.id,
                error,
            )

    def _recovered(self) -> None:
        if self._retry is not None:
            self._retry.cancel()  # storage works again: the writer need not wait any more
        if self._episode:
            log.warning(
                "session %s: stored again after %d failed attempt%s",
                self.session.id,
                self._episode,
                "" if self._episode == 1 else "s",
            )
        self._episode = 0
        self._diverged = False

    async def _create(self, end: int) -> None:
        events = self.session.events
        try:
            await self._backend.initialize(self.session.header, events[: self._seed_end])
        except SessionExists:
            self._confirmed, self._incarnation = await adopt(self._backend, self.session, end)
        else:
            mark = await self._backend.mark(self.session.id)
            self._incarnation = None if mark is None else mark.incarnation
            self._confirmed = self._seed_end
        self._created = True

    async def _reconcile(self, end: int) -> None:
        """After a failure, learn what storage really holds before writing again.

        Only events read back and found equal to the live ones are confirmed.
        """
        if not self._created:
            # The creation may have landed: `_create` finds out (and proves it).
            self._in_doubt = False
            return
        mark = await self._backend.mark(self.session.id)
        if mark is None:
            log.warning(
                "session %s: storage lost confirmed events (holds None of %d); rewriting",
                self.session.id,
                self._confirmed,
            )
            self._created, self._confirmed, self._incarnation = False, 0, None
            self._in_doubt = False
            return
        if mark.length > end:
            raise DivergedLog(
                f"session {self.session.id}: storage holds {mark.length} events, "
                f"more than the live {end}"
            )
        same_log = mark.incarnation is not None and mark.incarnation == self._incarnation
        start = min(self._confirmed, mark.length) if same_log else 0
        if mark.length < self._confirmed:
            log.warning(
                "session %s: storage lost confirmed events (holds %d of %d); rewriting",
                self.session.id,
                mark.length,
                self._confirmed,
            )
        await verify(self._backend, self.session, start, mark.length)
        self._confirmed = mark.length
        self._incarnation = mark.incarnation
        self._in_doubt = False

    def _notify(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    # -- detaching ------------------------------------------------------------

    async def detach(self) -> None:
        """The disposer `attach` returns (a bound method: every live Session keeps one)."""
        owner = self._owner
        if owner._controllers.get(self.session) is self:
            del owner._controllers[self.session]
            await self.close(retry_seconds=owner.close_retry_seconds)

    async def close(self, *, retry_seconds: float, write: bool = True) -> None:
        """Store what is pending (retrying for at most `retry_seconds` of backoff), then
        stop the writer and release the backend's resources.

        Raises `StorageError` (after everything is stopped) naming the events
        that were not stored. With `write=False` nothing more is written.
        """
        self.stop_listening()
        failure: Exception | None = None
        with anyio.CancelScope(shield=True):
            if write:
                failure = await self._settle(retry_seconds)
            self._closing = True
            if self._retry is not None:
                self._retry.cancel()
            if self._writer_done is not None:
                await self._writer_done.wait()
            self._stopped = True
            self._notify()
            try:
                await self._backend.release(self.session.id)
            except Exception:
                log.warning("session %s: releasing storage failed", self.session.id, exc_info=True)
        if failure is not None:
            raise StorageError(
                f"session {self.session.id} was detached with events "
                f"[{self.durable_length}, {len(self.session)}) not stored: {failure}"
            ) from failure

    async def _settle(self, retry_seconds: float) -> Exception | None:
        spent = 0.0
        attempt = 0
        while True:
            try:
                await self.flush(self.session)
                return None
            except Exception as error:
                if self._diverged or spent >= retry_seconds:
                    return error
                delay = min(self._backoff.delay(attempt), retry_seconds - spent)
                attempt += 1
                await self._clock.sleep(delay)
                spent += delay
