"""One agent's reminders: the barrier-guarded, one-at-a-time management operations.

A `ScheduleLedger` belongs to one installation (one root agent). It keeps the
incremental fold of its Session and the lock that makes management
operations and the owner's due work run one at a time.

Every operation that reads or decides from the fold first awaits the store's
flush barrier (the *preflight*), so no answer comes from an unconfirmed live
suffix; `create`, `update` and `delete` await a second barrier after they
append. A barrier that raises means `persistence_uncertain` (storage failed,
and whether an eager write committed is unknown: never guess — the message
names what was appended, e.g. the id a create used, so a retry can first
list and look for it); one that returns False means `persistence_unavailable`
(nothing durable acknowledged the Session). Every successful preflight asks
the owner to recompute (`watch`), which is how a create whose post-append
barrier failed gets its timer once a later operation confirms it.

A rejected fold answers `schedule_log_invalid` to every change and changes
nothing; `list_active` still lists the reminders created before the rejected
event (none of them is delivered) together with the error.

Limits (`ScheduleConfig`): a create beyond `max_active` active reminders or
`max_per_turn` creates in the current turn answers `limit_exceeded`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from pydantic import JsonValue

from dsh import BarrierFailed, Listeners, ToolError, flush_barrier

from .config import ScheduleConfig
from .drafts import (
    CreateRequest,
    RuleRequest,
    UpdateRequest,
    draft_create,
    draft_snooze,
    draft_update,
)
from .fold import Reminder, ScheduleFold
from .log_context import creates_this_turn, user_zone
from .notice import NOTICE_TYPE, deferred_data, notice_data
from .plan import Due, Plan, plan
from .presentation import schedule_reminder_presentation
from .protocol import EVENT_TYPE, Record, create_data, delete_data, dispatch_data, update_data
from .snoozes import SNOOZE_TYPE, snooze_data, snoozed_as
from .timefmt import format_timestamp
from .views import reminder_view
from .zones import format_local, load_zone

if TYPE_CHECKING:
    from dsh import Clock, Disposer, LiveSessions, Session, SessionEvent

    from .fold import FoldError

__all__ = ["BarrierFailed", "ScheduleConflict", "ScheduleLedger"]

Draft = Callable[[Reminder, int], Record]


class ScheduleConflict(ToolError):
    """An update named a revision that is not the reminder's current one; `view` is current."""

    def __init__(self, revision: int, view: dict[str, JsonValue]) -> None:
        super().__init__(
            "schedule_conflict",
            f"revision {revision} is not the current revision {view['revision']} of "
            f"{view['id']}; nothing was changed. The reminder now is: "
            f"{json.dumps(view, ensure_ascii=False)}",
        )
        self.view = view


class ScheduleLedger:
    """The reminders of one live Session, managed through its store."""

    # Slotted: every armed Session keeps one.
    __slots__ = (
        "_closed",
        "_fold",
        "_lock",
        "_watchers",
        "clock",
        "config",
        "fires_when_closed",
        "live",
        "session",
    )

    def __init__(
        self,
        *,
        session: Session,
        live: LiveSessions,
        clock: Clock,
        config: ScheduleConfig | None = None,
        fold: ScheduleFold | None = None,
        fires_when_closed: bool = False,
    ) -> None:
        """`fold` is a fold of a prefix of `session`'s log to start from (a cached one);
        `fires_when_closed` says whether the host wakes the Session for a reminder when it
        is closed (`PluginContext.wakes_cold_sessions`): a create's and a list's answer say
        so (`firesWhenClosed`), so that what the model tells the person is true."""
        self.session = session
        self.fires_when_closed = fires_when_closed
        self.live = live
        self.clock = clock
        self.config = config or ScheduleConfig()
        self._lock: anyio.Lock | None = None
        self._watchers: Listeners[Callable[[], None]] = Listeners()
        self._fold = ScheduleFold(session.fold_start) if fold is None else fold
        self._closed = False

    # -- shared by the tools and the owner ------------------------------

    @property
    def lock(self) -> anyio.Lock:
        """Management operations and due work run one at a time under this lock."""
        # Made on first use: most armed Sessions idle until their reminder is due.
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    def watch(self, on_confirmed: Callable[[], None]) -> Disposer:
        """Call `on_confirmed()` after every successful management barrier (the owner).

        Returns the disposer that stops the calls.
        """
        return self._watchers.add(on_confirmed)

    def fold(self) -> ScheduleFold:
        """The fold caught up with the Session's current end (live, maybe not durable)."""
        return self._fold.advance(self.session)

    def plan(self, reminder: Reminder, now_ms: int, *, count_missed: bool = False) -> Plan:
        """`reminder` at `now_ms`, with this ledger's misfire grace."""
        grace = self.config.misfire_grace_seconds * 1000
        return plan(reminder, now_ms, grace_ms=grace, count_missed=count_missed)

    async def barrier(self) -> None:
        """Await `store.flush(session)`; raise `BarrierFailed` unless it acknowledged."""
        await flush_barrier(self.live, self.session)

    def append_dispatch(self, reminder: Reminder, due: Due) -> SessionEvent:
        """Append the `dispatch` of `due` (the owner calls this inside maintenance)."""
        data = dispatch_data(
            reminder.id, format_timestamp(due.occurrence_ms), due.missed, reminder.seq
        )
        return self.live.append(self.session, EVENT_TYPE, data)

    def append_deferred(self, limit: str, size: int, until_ms: int) -> SessionEvent:
        """Append the `schedule/notice` that the delivery budget defers reminders (the owner)."""
        return self.live.append(self.session, NOTICE_TYPE, deferred_data(limit, size, until_ms))

    def append_notice(self, error: FoldError) -> SessionEvent:
        """Append the `schedule/notice` of a rejected log (the owner does, once per rejection)."""
        return self.live.append(self.session, NOTICE_TYPE, notice_data(error))

    def close(self) -> None:
        """Refuse management operations that have not started yet."""
        self._closed = True

    @property
    def closed(self) -> bool:
        """True once `close()` ran (the installation is being or was disposed)."""
        return self._closed

    async def drain(self) -> None:
        """Return once no management operation or due work holds the lock."""
        async with self.lock:
            pass

    # -- management operations (the tools) ------------------------------

    async def create(self, request: CreateRequest) -> dict[str, JsonValue]:
        """Append a `create` for a shape-checked request; return its view."""
        async with self.lock:
            fold = self._valid(await self._preflight())
            now = self.clock.wall_ms()
            self._check_limits(fold, now)
            record, event = self._append_create(fold, request, now)
            reminder_id = record.id
            await self._checkpoint(
                appended=f"reminder {reminder_id}",
                retry=f"if {reminder_id} is listed it exists: do not create it again",
            )
            self._notify()
            reminder = Reminder.start(record, event.seq, event.seq, 0)
            view = reminder_view(reminder, self.plan(reminder, now))
            return {**view, "firesWhenClosed": self.fires_when_closed}

    async def update(
        self, reminder_id: str, revision: int, request: UpdateRequest
    ) -> dict[str, JsonValue]:
        """Compare-and-set: apply `request` only if `revision` is the current one."""

        def draft(reminder: Reminder, now: int) -> Record:
            return draft_update(
                reminder, request, now_ms=now, min_interval=self.config.min_interval_seconds
            )

        return await self.apply(reminder_id, draft, revision=revision)

    async def set_paused(
        self, reminder_id: str, paused: bool, *, revision: int | None = None
    ) -> dict[str, JsonValue]:
        """Pause or resume a reminder (the `pause`/`resume` actions); the new view.

        A reminder that already is as asked is `schedule_paused` (pausing) or
        `schedule_not_paused` (resuming): nothing is appended for a no-op.
        """

        def draft(reminder: Reminder, now: int) -> Record:
            if reminder.record.paused == paused:
                code = "schedule_paused" if paused else "schedule_not_paused"
                state = "already paused" if paused else "not paused"
                raise ToolError(code, f"{reminder.id} is {state}; nothing was changed")
            request = UpdateRequest(paused=paused)
            return draft_update(
                reminder, request, now_ms=now, min_interval=self.config.min_interval_seconds
            )

        return await self.apply(reminder_id, draft, revision=revision)

    async def snooze(
        self, reminder_id: str, seconds: int, *, revision: int | None = None
    ) -> dict[str, JsonValue]:
        """Postpone a reminder's next occurrence by `seconds` (`drafts.draft_snooze`); the view."""

        def draft(reminder: Reminder, now: int) -> Record:
            shown = self.plan(reminder, now).next_ms
            return draft_snooze(reminder, seconds, now_ms=now, shown_ms=shown)

        return await self.apply(reminder_id, draft, revision=revision)

    async def snooze_delivered(self, dispatch_seq: int, seconds: int) -> dict[str, JsonValue]:
        """Snooze the occurrence the dispatch at `dispatch_seq` delivered: a new one-shot
        reminder with its prompt and zone, due `seconds` from now, linked to it
        (`snoozes`). `{"reminder": view, "snoozedFrom": {"id", "dispatchSeq",
        "occurrenceAt"}}`; a second snooze of one occurrence answers with the reminder the
        first made while it is active. Only the `max_active` limit applies: a person's
        snooze is not a model's turn.
        """
        async with self.lock:
            fold = self._valid(await self._preflight())
            now = self.clock.wall_ms()
            receipt = schedule_reminder_presentation(self.session, dispatch_seq, fold=fold)
            if receipt is None:
                raise ToolError(
                    "schedule_not_found",
                    f"event {dispatch_seq} is not a delivered reminder of this Session; "
                    "nothing was changed",
                )
            origin: dict[str, JsonValue] = {
                "id": receipt["scheduleId"],
                "dispatchSeq": dispatch_seq,
                "occurrenceAt": receipt["occurrenceAt"],
            }
            earlier = snoozed_as(self.session, dispatch_seq)
            reminder = None if earlier is None else self._find(fold, earlier, now)
            if reminder is None:
                self._check_active(fold, now)
                reminder = await self._create_linked(fold, receipt, dispatch_seq, seconds, now)
            view = reminder_view(reminder, self.plan(reminder, now))
            return {"reminder": view, "snoozedFrom": origin}

    async def _create_linked(
        self,
        fold: ScheduleFold,
        receipt: dict[str, JsonValue],
        dispatch_seq: int,
        seconds: int,
        now: int,
    ) -> Reminder:
        request = CreateRequest(
            prompt=str(receipt["prompt"]),
            rule=RuleRequest(after_seconds=seconds),
            time_zone=str(receipt["timeZone"]),
        )
        record, event = self._append_create(fold, request, now)
        reminder_id = record.id
        self.live.append(self.session, SNOOZE_TYPE, snooze_data(reminder_id, dispatch_seq))
        await self._checkpoint(
            appended=f"reminder {reminder_id} (the snooze of event {dispatch_seq})",
            retry=f"if {reminder_id} is listed the snooze happened: do not snooze again",
        )
        self._notify()
        return Reminder.start(record, event.seq, event.seq, 0)

    def _append_create(
        self, fold: ScheduleFold, request: CreateRequest, now: int
    ) -> tuple[Record, SessionEvent]:
        """Append the `create` of `request` under the fold's next id (not yet confirmed)."""
        try:
            reminder_id = fold.next_id()
        except ValueError:
            raise ToolError("internal_error", "this Session has used every reminder id") from None
        record = draft_create(
            request,
            reminder_id=reminder_id,
            now_ms=now,
            default_zone=user_zone(self.session),
            min_interval=self.config.min_interval_seconds,
        )
        return record, self.live.append(self.session, EVENT_TYPE, create_data(record))

    async def apply(
        self, reminder_id: str, draft: Draft, *, revision: int | None = None
    ) -> dict[str, JsonValue]:
        """Append the `update` that `draft(reminder, now)` makes; return the new view.

        `revision`, when given, must be the reminder's current one
        (`ScheduleConflict` otherwise). An unknown or finished id is
        `schedule_not_found`. The actions of the state hook use this path too.
        """
        async with self.lock:
            fold = self._valid(await self._preflight())
            now = self.clock.wall_ms()
            reminder = self._current(fold, reminder_id, now)
            if revision is not None and revision != reminder.record.revision:
                raise ScheduleConflict(revision, reminder_view(reminder, self.plan(reminder, now)))
            record = draft(reminder, now)
            event = self.live.append(self.session, EVENT_TYPE, update_data(record))
            await self._checkpoint(
                appended=f"revision {record.revision} of {reminder.id}",
                retry=f"check the revision of {reminder.id} before updating it again",
            )
            self._notify()
            updated = Reminder.start(record, event.seq, reminder.created_seq, reminder.delivered)
            return reminder_view(updated, self.plan(updated, now))

    async def list_active(self) -> dict[str, JsonValue]:
        """The active reminders in creation order, the zone and the time now.

        `{"reminders": [view, ...], "timeZone", "now", "nowLocal", "firesWhenClosed"}`, plus
        `"error"` when the log is rejected (the reminders are then those
        created before the rejected event; none is delivered).
        """
        async with self.lock:
            fold = await self._preflight()
            now = self.clock.wall_ms()
            zone = user_zone(self.session)
            listing: dict[str, JsonValue] = {
                "reminders": [reminder_view(item, p) for item, p in self._live(fold, now)],
                "timeZone": zone,
                "now": format_timestamp(now),
                "nowLocal": format_local(now, load_zone(zone)),
                "firesWhenClosed": self.fires_when_closed,
            }
            if fold.error is not None:
                listing["error"] = {"code": "schedule_log_invalid", "message": _invalid(fold)}
            return listing

    async def delete(
        self, reminder_id: str, *, revision: int | None = None
    ) -> dict[str, JsonValue]:
        """Append a `delete` of an active reminder; an unknown or finished id is not found.

        `revision`, when given, must be the reminder's current one (`ScheduleConflict`).
        """
        async with self.lock:
            fold = self._valid(await self._preflight())
            now = self.clock.wall_ms()
            reminder = self._find(fold, reminder_id, now)
            if reminder is None:
                return {"id": reminder_id, "deleted": False, "code": "schedule_not_found"}
            if revision is not None and revision != reminder.record.revision:
                raise ScheduleConflict(revision, reminder_view(reminder, self.plan(reminder, now)))
            self.live.append(self.session, EVENT_TYPE, delete_data(reminder.id))
            await self._checkpoint(
                appended=f"the delete of {reminder.id}",
                retry=f"if {reminder.id} is still listed, delete it again",
            )
            self._notify()
            return {"id": reminder.id, "deleted": True}

    # -- helpers ----------------------------------------------------------

    def _live(self, fold: ScheduleFold, now: int) -> list[tuple[Reminder, Plan]]:
        """The active reminders that can still deliver (not expired), with their plans."""
        plans = ((item, self.plan(item, now)) for item in fold.reminders())
        return [(item, p) for item, p in plans if not p.expired]

    def _find(self, fold: ScheduleFold, reminder_id: str, now: int) -> Reminder | None:
        reminder = fold.get(reminder_id)
        if reminder is None or self.plan(reminder, now).expired:
            return None
        return reminder

    def _current(self, fold: ScheduleFold, reminder_id: str, now: int) -> Reminder:
        reminder = self._find(fold, reminder_id, now)
        if reminder is None:
            raise ToolError(
                "schedule_not_found",
                f"{reminder_id!r} is not an active reminder of this Session (unknown, "
                "deleted or finished); nothing was changed",
            )
        return reminder

    def _check_active(self, fold: ScheduleFold, now: int) -> None:
        limit = self.config.max_active
        if len(self._live(fold, now)) >= limit:
            raise ToolError(
                "limit_exceeded",
                f"this Session already has {limit} active reminders, the most it may have; "
                "delete one first. Nothing was changed.",
            )

    def _check_limits(self, fold: ScheduleFold, now: int) -> None:
        self._check_active(fold, now)
        limit = self.config.max_per_turn
        if creates_this_turn(self.session) >= limit:
            raise ToolError(
                "limit_exceeded",
                f"{limit} reminders were already created in this turn, the most one turn "
                "may create. Nothing was changed.",
            )

    async def _preflight(self) -> ScheduleFold:
        if self._closed:
            raise ToolError(
                "internal_error", "the schedule plugin is no longer installed in this agent"
            )
        await self._checkpoint(appended=None)
        fold = self.fold()
        self._notify()
        return fold

    @staticmethod
    def _valid(fold: ScheduleFold) -> ScheduleFold:
        if fold.error is not None:
            raise ToolError("schedule_log_invalid", f"{_invalid(fold)} Nothing was changed.")
        return fold

    def _notify(self) -> None:
        for watcher in self._watchers:
            watcher()

    async def _checkpoint(self, *, appended: str | None, retry: str = "") -> None:
        try:
            await self.barrier()
        except BarrierFailed as failure:
            raise ToolError(failure.code, _barrier_message(failure, appended, retry)) from None


def _invalid(fold: ScheduleFold) -> str:
    assert fold.error is not None
    return (
        f"The schedule log of this Session is invalid at seq {fold.error.seq}: "
        f"{fold.error.reason}. Reminders created before it are listed, but none is delivered."
    )


def _barrier_message(failure: BarrierFailed, appended: str | None, retry: str) -> str:
    if appended is None:
        return (
            f"could not confirm this Session's log before using it ({failure.detail}); "
            "nothing was changed. Try again."
        )
    if failure.code == "persistence_uncertain":
        return (
            f"{appended} was appended, but storage failed while confirming it "
            f"({failure.detail}): whether it is durable is unknown. Call schedule_list: "
            f"{retry}."
        )
    return f"{appended} was appended, but {failure.detail}: it would not survive a restart."
