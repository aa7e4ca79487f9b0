"""The persistence coordinator: one write path per live Session (DESIGN §4).

`PersistenceCoordinator.attach(session, seed_end=…)` registers a controller as
the Session's store listener. The controller writes eagerly and acknowledges
durability only for what the backend has confirmed:

- Its queue is the Session itself: everything from the confirmed cursor to
  the end of the append-only log. `on_append` only wakes the writer; nothing
  is copied, and a failed batch is "retained" simply because the confirmed
  cursor did not move.
- One writer task per Session writes everything pending as one batch (one
  backend call, so one fsync for JSONL); events appended meanwhile form the
  next batch. A flush never waits for more than two batches.
- The first write creates the Session in storage with exactly the immutable
  prefix `[0, seed_end)` (the controller keeps only that scalar). If storage
  already holds the id — a resumed Session, or an earlier creation whose
  acknowledgement was lost — the controller proves the stored log is this
  Session's prefix (same header identity, equal events) and continues from its
  cursor; a different log under the same id is a `DivergedLog`, never
  overwritten or extended.
- After a failed write the outcome is unknown (a commit may have succeeded and
  its acknowledgement failed), so the next attempt first asks the backend for
  its real cursor and writes only what is missing: no duplicated prefix, no
  lost suffix.
- A failure stops eager writing until the next `flush`, which retries: the
  caller's flushes are the retry policy, so a broken disk is not hammered.
- `flush` returns True only once storage holds the Session and every event
  before the flush's boundary (`len(session)` at entry) is confirmed; it
  raises `StorageError` if a write attempt fails while it waits. It never
  returns False: this listener either acknowledges or raises.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import anyio
from anyio.abc import TaskGroup

from ..errors import raise_errors
from ..scope import Disposer
from ..session import Session, SessionEvent, validate_session_id
from ..store import SessionStore
from ..tasks import TaskSet
from .backend import Backend, SessionExists, StorageError, StoredSession, StoredSummary

__all__ = ["CoordinatorClosed", "DivergedLog", "PersistenceCoordinator"]

log = logging.getLogger(__name__)


class CoordinatorClosed(RuntimeError):
    """`attach` was called after `aclose`."""


class DivergedLog(StorageError):
    """Storage holds a log under this Session's id that is not a prefix of it."""


class PersistenceCoordinator:
    """Keeps one controller per attached live Session and reads cold ones.

    Writer tasks run in `group` (through a `TaskSet`), so they belong to the
    owner of that group; `aclose()` stops every one of them.
    """

    def __init__(self, store: SessionStore, backend: Backend, group: TaskGroup) -> None:
        self.store = store
        self.backend = backend
        self._tasks = TaskSet(group, "persistence")
        self._controllers: dict[Session, _Controller] = {}
        self._closed = False

    def attach(self, session: Session, *, seed_end: int) -> Callable[[], Awaitable[None]]:
        """Persist `session` from now on; returns the (async) `Disposer` that detaches it.

        `seed_end` is the length of the immutable prefix the Session was built
        with: 0 for a new Session, `header.seed_length` for a fork, the stored
        length for a resume. Storage is created (or, if it exists, proven to
        be this Session's prefix) eagerly, then every append is written.

        Raises `SessionClosed` if `session` is not live in the store,
        `ValueError` if it is attached already or `seed_end` is out of range,
        `CoordinatorClosed` after `aclose()`.
        """
        if self._closed:
            raise CoordinatorClosed("the persistence coordinator is closed")
        if session in self._controllers:
            raise ValueError(f"session {session.id} is already attached to persistence")
        if not 0 <= seed_end <= len(session):
            raise ValueError(
                f"session {session.id}: seed_end {seed_end} is outside [0, {len(session)}]"
            )
        controller = _Controller(session, self.backend, seed_end)
        controller.stop_listening = self.store.add_listener(session, controller)
        self._controllers[session] = controller
        self._tasks.start_soon(controller.run, name=f"persistence writer {session.id}")

        async def detach() -> None:
            if self._controllers.get(session) is controller:
                del self._controllers[session]
                await controller.close()

        return detach

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

    async def read(self, session_id: str) -> StoredSession | None:
        """A cold read of what storage holds for `session_id` (None if nothing).

        Raises `InvalidSessionId` before any storage is touched.
        """
        return await self.backend.inspect(validate_session_id(session_id))

    async def list(self) -> list[StoredSummary]:
        """Every stored Session (see `Backend.list`)."""
        return await self.backend.list()

    async def aclose(self) -> None:
        """Make a final flush attempt for every attached Session, then detach all.

        Every Session is detached and every writer stopped even if some final
        flushes fail; the failures are raised afterwards (one as itself,
        several as an `ExceptionGroup`). Shielded from cancellation.
        """
        self._closed = True
        errors: list[Exception] = []

        async def detach(controller: _Controller) -> None:
            try:
                await controller.close()
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

    def __init__(self, session: Session, backend: Backend, seed_end: int) -> None:
        self.session = session
        self._backend = backend
        self._seed_end = seed_end
        self._created = False  # storage is known to hold this Session
        self._confirmed = 0  # events known to be stored (when created)
        self._in_doubt = False  # the last write failed: re-read the cursor first
        self._fault: Exception | None = None  # suspends eager writing until a flush
        self._failures = 0
        self._closing = False
        self._writing = False  # a task is inside _drive()
        self._wakeup = anyio.Event()
        self._changed = anyio.Event()
        self._stopped = anyio.Event()
        self.stop_listening: Disposer = lambda: None

    # -- SessionListener --------------------------------------------------

    @property
    def durable_length(self) -> int:
        return self._confirmed if self._created else 0

    def on_append(self, session: Session, event: SessionEvent) -> None:
        self._wakeup.set()

    async def flush(self, session: Session) -> bool:
        boundary = len(self.session)
        failures = self._failures
        self._fault = None  # a failed batch is retried by the next flush: this one
        while not self._holds(boundary):
            if self._failures != failures:
                raise StorageError(
                    f"session {self.session.id}: events up to seq {boundary - 1} "
                    f"are not confirmed stored: {self._fault}"
                ) from self._fault
            if self._stopped.is_set():
                raise StorageError(
                    f"session {self.session.id}: persistence stopped before events "
                    f"up to seq {boundary - 1} were stored"
                )
            if self._can_write():
                # Write in this task rather than hand over to the writer task and
                # wait for it: the hand-over costs two loop iterations per flush.
                await self._drive(until=boundary)
            else:
                await self._changed.wait()
        return True

    # -- the write path -----------------------------------------------------

    async def run(self) -> None:
        """The writer task: writes whatever is pending whenever nobody else is."""
        try:
            while not self._closing:
                if self._can_write():
                    await self._drive(until=None)
                else:
                    await self._wakeup.wait()
                    self._wakeup = anyio.Event()
                    # Let the tasks the same append woke (live-stream senders) run
                    # before this write blocks the loop on fsync. Eager writing is not
                    # latency-bound: a flush that needs it writes inline itself.
                    await anyio.lowlevel.checkpoint()
        finally:
            self._stopped.set()
            self._notify()

    def _pending(self) -> bool:
        """Something must be written (or learnt) and no failure is waiting for a flush."""
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
                self._wakeup.set()  # appends arrived past a flush's boundary

    def _holds(self, boundary: int) -> bool:
        return self._created and self._confirmed >= boundary

    async def _write_batch(self) -> None:
        end = len(self.session)
        try:
            if self._in_doubt:
                await self._reconcile(end)
            if not self._created:
                await self._create(end)
            if self._confirmed < end:
                batch = self.session.events[self._confirmed : end]
                await self._backend.append(self.session.id, batch)
                self._confirmed = end
        except Exception as error:
            self._in_doubt = True
            self._fault = error
            self._failures += 1
            log.warning(
                "session %s: persistence write failed; the next flush retries it: %s",
                self.session.id,
                error,
            )
        except BaseException:
            self._in_doubt = True  # cancelled mid-write: it may or may not have landed
            raise
        finally:
            self._notify()

    async def _create(self, end: int) -> None:
        events = self.session.events
        try:
            await self._backend.initialize(self.session.header, events[: self._seed_end])
            self._confirmed = self._seed_end
        except SessionExists:
            self._confirmed = await self._adopt(end)
        self._created = True

    async def _adopt(self, end: int) -> int:
        """Prove the stored log is a prefix of this Session; return its length."""
        stored = await self._backend.inspect(self.session.id)
        if stored is None:
            raise StorageError(
                f"session {self.session.id}: storage reported it as stored, then found nothing"
            )
        header_matches = stored.header.identity_equals(self.session.header)
        length = len(stored.events)
        if not header_matches or length > end or not _same(stored.events, self.session.events):
            raise DivergedLog(
                f"session {self.session.id}: storage holds a different log under this id "
                f"({length} events); refusing to extend or replace it"
            )
        return length

    async def _reconcile(self, end: int) -> None:
        """After a failure, learn what storage really holds before writing again."""
        if self._created:
            cursor = await self._backend.cursor(self.session.id)
            if cursor is None or cursor < self._confirmed:
                log.warning(
                    "session %s: storage lost confirmed events (holds %s of %d); rewriting",
                    self.session.id,
                    cursor,
                    self._confirmed,
                )
            if cursor is not None and cursor > end:
                raise DivergedLog(
                    f"session {self.session.id}: storage holds {cursor} events, "
                    f"more than the live {end}"
                )
            self._created = cursor is not None
            self._confirmed = cursor or 0
        self._in_doubt = False

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    # -- detaching ------------------------------------------------------------

    async def close(self) -> None:
        """Final flush attempt, then stop the writer and release the backend's resources.

        Raises `StorageError` (after everything is stopped) if the final flush failed.
        """
        failure: Exception | None = None
        self.stop_listening()
        with anyio.CancelScope(shield=True):
            try:
                await self.flush(self.session)
            except Exception as error:
                failure = error
            self._closing = True
            self._wakeup.set()
            await self._stopped.wait()
            try:
                await self._backend.release(self.session.id)
            except Exception:
                log.warning("session %s: releasing storage failed", self.session.id, exc_info=True)
        if failure is not None:
            raise StorageError(
                f"session {self.session.id} was detached with events "
                f"[{self._confirmed}, {len(self.session)}) not stored: {failure}"
            ) from failure


def _same(stored: Sequence[SessionEvent], live: Sequence[SessionEvent]) -> bool:
    # A resumed Session is built from the very events storage returned: identity
    # settles those without comparing fields.
    return all(a is b or a == b for a, b in zip(stored, live[: len(stored)], strict=True))
