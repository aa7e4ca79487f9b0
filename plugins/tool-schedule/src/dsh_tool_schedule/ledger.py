"""One agent's reminders: the barrier-guarded management operations.

A `ScheduleLedger` belongs to one installation (one root agent). It keeps the
incremental fold of its Session and the lock that makes management operations
and the owner's due work run one at a time.

Every operation that reads or decides from the fold first awaits the store's
flush barrier (the *preflight*), so no answer comes from an unconfirmed live
suffix; `create` and `delete` await a second barrier after they append. A
barrier that raises means `persistence_uncertain` (storage failed, and whether
an eager write committed is unknown: never guess); one that returns False means
`persistence_unavailable` (nothing durable acknowledged the Session). Every
successful preflight asks the owner to recompute (`watch`), which is how
a create whose post-append barrier failed gets its timer once a later
operation confirms it. A rejected fold answers `schedule_log_invalid` and
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from pydantic import JsonValue

from dsh import BarrierFailed, Listeners, ToolError, flush_barrier

from .fold import ActiveReminder, ScheduleFold
from .ids import ReminderId
from .protocol import EVENT_TYPE, ReminderRecord, create_data, delete_data, dispatch_data
from .timefmt import MAX_TIMESTAMP_MS, format_timestamp
from .views import reminder_view

if TYPE_CHECKING:
    from dsh import Clock, Disposer, Session, SessionStore

__all__ = ["BarrierFailed", "ScheduleLedger"]


class ScheduleLedger:
    """The reminders of one live Session, managed through its store."""

    def __init__(self, *, session: Session, store: SessionStore, clock: Clock) -> None:
        self.session = session
        self.store = store
        self.clock = clock
        self.lock = anyio.Lock()
        self._watchers: Listeners[Callable[[], None]] = Listeners()
        self._fold = ScheduleFold(session.fold_start)
        self._closed = False

    # -- shared by the tools and the owner ------------------------------

    def watch(self, on_confirmed: Callable[[], None]) -> Disposer:
        """Call `on_confirmed()` after every successful management barrier (the owner).

        Returns the disposer that stops the calls.
        """
        return self._watchers.add(on_confirmed)

    def fold(self) -> ScheduleFold:
        """The fold caught up with the Session's current end (live, maybe not durable)."""
        return self._fold.advance(self.session.events)

    async def barrier(self) -> None:
        """Await `store.flush(session)`; raise `BarrierFailed` unless it acknowledged."""
        await flush_barrier(self.store, self.session)

    def append_dispatch(self, reminder_id: ReminderId) -> None:
        """Append the id-only `dispatch` (the owner calls this inside maintenance)."""
        self.store.append(self.session, EVENT_TYPE, dispatch_data(reminder_id))

    def close(self) -> None:
        """Refuse management operations that have not started yet."""
        self._closed = True

    async def drain(self) -> None:
        """Return once no management operation or due work holds the lock."""
        async with self.lock:
            pass

    # -- management operations (the tools) ------------------------------

    async def create(self, prompt: str, after_seconds: int) -> dict[str, JsonValue]:
        """Append a `create` for a validated prompt and delay; return its view."""
        async with self.lock:
            fold = await self._preflight()
            now = self.clock.wall_ms()
            due = now + after_seconds * 1000
            if due > MAX_TIMESTAMP_MS:
                raise ToolError(
                    "invalid_rule",
                    f"after_seconds={after_seconds} puts the reminder past "
                    f"{format_timestamp(MAX_TIMESTAMP_MS)}, the latest time a reminder can have",
                )
            try:
                reminder_id = fold.next_id()
            except ValueError:
                raise ToolError(
                    "internal_error", "this Session has used every reminder id"
                ) from None
            record = ReminderRecord(
                id=reminder_id,
                kind="after",
                prompt=prompt,
                afterSeconds=after_seconds,
                scheduledAt=format_timestamp(due),
            )
            event = self.store.append(self.session, EVENT_TYPE, create_data(record))
            await self._checkpoint(appended=f"reminder {reminder_id}")
            self._notify()
            return reminder_view(ActiveReminder(record, due, event.seq), now)

    async def list_active(self) -> dict[str, JsonValue]:
        """`{"reminders": [view, ...]}` for the active reminders, in creation order."""
        async with self.lock:
            fold = await self._preflight()
            now = self.clock.wall_ms()
            return {"reminders": [reminder_view(item, now) for item in fold.reminders()]}

    async def delete(self, reminder_id: str) -> dict[str, JsonValue]:
        """Append a `delete` of an active reminder; an unknown or finished id is not found."""
        async with self.lock:
            fold = await self._preflight()
            reminder = fold.get(reminder_id)
            if reminder is None:
                return {"id": reminder_id, "deleted": False, "code": "schedule_not_found"}
            self.store.append(self.session, EVENT_TYPE, delete_data(reminder.id))
            await self._checkpoint(appended=f"the delete of {reminder.id}")
            self._notify()
            return {"id": reminder.id, "deleted": True}

    # -- helpers ----------------------------------------------------------

    async def _preflight(self) -> ScheduleFold:
        if self._closed:
            raise ToolError(
                "internal_error", "the schedule plugin is no longer installed in this agent"
            )
        await self._checkpoint(appended=None)
        fold = self.fold()
        self._notify()
        if fold.error is not None:
            raise ToolError(
                "schedule_log_invalid",
                f"the schedule log of this Session is invalid at seq {fold.error.seq}: "
                f"{fold.error.reason}. Reminders here cannot be read or changed; "
                "nothing was changed.",
            )
        return fold

    def _notify(self) -> None:
        for watcher in self._watchers:
            watcher()

    async def _checkpoint(self, *, appended: str | None) -> None:
        try:
            await self.barrier()
        except BarrierFailed as failure:
            raise ToolError(failure.code, _barrier_message(failure, appended)) from None


def _barrier_message(failure: BarrierFailed, appended: str | None) -> str:
    if appended is None:
        return (
            f"could not confirm this Session's log before using it ({failure.detail}); "
            "nothing was changed. Try again."
        )
    if failure.code == "persistence_uncertain":
        return (
            f"{appended} was appended, but storage failed while confirming it "
            f"({failure.detail}): whether it is durable is unknown. List reminders to check."
        )
    return f"{appended} was appended, but {failure.detail}: it would not survive a restart."
