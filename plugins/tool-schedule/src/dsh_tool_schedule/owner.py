"""The owner: the live, disposable wait that delivers one agent's due reminders.

One owner runs per installation (one root agent), as a task in `agent.tasks`.
It holds no state of its own beyond its current wait: every decision comes
from the ledger's fold of the Session log.

The loop plans every active reminder at the wall clock's now
(`ScheduleLedger.plan`: what is due, and when to look again). With nothing
due, the owner sets the plugin's `Alarm` for the earliest time to look again
(or, with no such time, nothing) and its task ends: an armed Session waits as
one entry of the alarm's heap, not as a sleeping task. The alarm, or any
`recompute()`, starts the task again. The alarm sleeps in segments and
re-reads the wall clock at every wake (`dsh_tool_schedule.alarm`): a
wall-clock rollback never fires early, a forward jump makes the target
overdue at the next wake.

When a target is due:

1. claim `agent.run_maintenance(..., wait=True)`: an idle agent is claimed at
   once; a busy one is handed to the owner when its turn ends, before any
   queued input (so a person who keeps typing cannot starve a reminder, and
   the reminder's message runs right after that turn: `dsh.Agent`);
2. inside the task, take the ledger lock (management operations and due work
   run one at a time) and preflight the store: a rejected barrier leaves the
   record active and waits, with no timer, for the next idle transition or
   management preflight;
3. still inside, catch the fold up, sample the clock once, plan again, take
   the due occurrence that came first (the earlier create breaks a tie),
   count the occurrences it stands for (`missed`, in a worker thread: never
   on the event loop), then build the frame, queue exactly one `followup()`
   and append its `dispatch` (`occurrenceAt`, `missed`, `recordSeq`) — with
   no await in between, so cancellation never splits them. A counting,
   framing or enqueue failure appends nothing and waits like a rejected
   preflight; an append failure after the enqueue faults the owner
   (logged; it stops: the message may already be queued);
4. once the task has released the agent, await the dispatch barrier, still
   holding the lock (a failure is logged: storage retries its retained batch
   at the next flush), then start over.

Steps 2 to 4 are the host's urgent work (`agent.background.urgent()`): in a
storm the dispatches are stored before the follow-up turns they queued, the
search index and the alerts take the event loop (`dsh.base.background`).

**A reminder's turn is never lost.** The follow-up lives in the agent's
inbox until its turn stores it as a `message/user`; a process that dies, or
an agent that closes, in between keeps the durable dispatch (the receipt)
and loses the turn. So the owner notes, when it is installed (a resume, a
wake, a takeover), the dispatches of the log that have no stored follow-up
(`ScheduleFold.unanswered()`), and before anything else queues each again
— same frame, delivered now, `source` naming the same `dispatchSeq` plus
`"requeued": true` — inside `run_maintenance(..., wait=True)` so it runs
ahead of queued input. Nothing is appended: if the process dies again before
the follow-up is stored, the next owner queues it again (at-least-once);
once it is stored, never again. Only the owner's own installation re-queues:
a dispatch of the live lifecycle whose follow-up is still queued is not an
orphan.

A rejected log stops delivery for this agent: the owner logs it and, unless
the log already says so, appends one `schedule/notice` for the rejected seq
(under the lock, then a barrier) so the person sees it, then stops.

`recompute()` derives the target again: it interrupts an idle wait, or starts
the task when none runs; it is what management preflights and the alarm call.
`aclose()` stops the owner (clearing its alarm) and returns once its task, if
one runs, has finished; it never touches the log beyond the above. A task
that fails unexpectedly is logged by the agent's `TaskSet`; the owner then
starts again at the next `recompute()`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

import anyio

from dsh import AgentClosed

from .budget import SessionBudget
from .delivery import Part, coalesce, followup_message, requeue_groups
from .fold import Reminder, following_occurrence
from .ledger import BarrierFailed, ScheduleLedger
from .notice import deferral_told, noticed
from .plan import Due, with_missed
from .protocol import CronRule
from .timefmt import format_timestamp

if TYPE_CHECKING:
    from dsh import Agent, Disposer

    from .alarm import Alarm
    from .budget import HostPacer
    from .fold import FoldError, Reminder
    from .followups import Unanswered
    from .measures import DeliveryMeasures

__all__ = ["ReminderOwner"]

log = logging.getLogger(__name__)


class _Attempt(Enum):
    DISPATCHED = "dispatched"
    STALE = "stale"
    BUSY = "busy"
    WAITING = "waiting"
    FAULTED = "faulted"


@dataclass(frozen=True, slots=True)
class _Rest:
    """Nothing to do until `wake_ms` (None: until something changes): the task ends."""

    wake_ms: int | None


class ReminderOwner:
    """Delivers due reminders of one root agent. Constructing one starts its task."""

    # Slotted: every armed Session keeps one.
    __slots__ = (
        "_agent",
        "_alarm",
        "_budget",
        "_delivering",
        "_dirty",
        "_finished",
        "_ledger",
        "_measures",
        "_orphans",
        "_pacer",
        "_stopped",
        "_task",
        "_unwatch",
        "_wait_scope",
    )

    def __init__(
        self,
        agent: Agent,
        ledger: ScheduleLedger,
        alarm: Alarm,
        pacer: HostPacer,
        measures: DeliveryMeasures,
    ) -> None:
        self._agent = agent
        self._ledger = ledger
        self._alarm = alarm
        self._pacer = pacer
        self._measures = measures
        self._delivering: tuple[int, ...] = ()  # the occurrences the last dispatch delivers
        # Read from the log when first needed (a Session with nothing due never reads it).
        self._budget: SessionBudget | None = None
        self._dirty = False
        self._stopped = False
        self._task: anyio.CancelScope | None = None
        self._wait_scope: anyio.CancelScope | None = None
        self._finished: anyio.Event | None = None
        # The dispatches an earlier lifecycle left without a stored follow-up.
        # Only this lifecycle's owner answers them, and it does so first: none is
        # answered meanwhile.
        # A tuple: the empty one is shared, so an armed Session pays nothing for it.
        self._orphans: tuple[Unanswered, ...] = tuple(ledger.fold().unanswered())
        self._unwatch: Disposer | None = ledger.watch(self.recompute)
        self._start()

    def recompute(self) -> None:
        """Derive the target again: end the current idle wait, or start the task."""
        self._dirty = True
        if self._wait_scope is not None:
            self._wait_scope.cancel()
        self._start()

    def cancel(self) -> None:
        """Stop at the next await without waiting for the task to finish."""
        self._stop()
        if self._task is not None:
            self._task.cancel()

    async def aclose(self) -> None:
        """Stop, and return once the owner task (if one runs) has finished."""
        self.cancel()
        if self._task is not None:
            self._finished = self._finished or anyio.Event()
            await self._finished.wait()

    # -- the loop ---------------------------------------------------------

    def _start(self) -> None:
        agent = self._agent
        if self._task is not None or self._stopped or agent.closed or agent.tasks.closed:
            return
        self._alarm.clear(self)
        self._task = agent.tasks.start_soon(self._run, name=f"schedule owner {agent.session.id}")

    def _stop(self) -> None:
        """For good: no alarm, no more recomputes."""
        self._stopped = True
        self._alarm.clear(self)
        self._pacer.forget(self)
        if self._unwatch is not None:
            self._unwatch()
            self._unwatch = None

    async def _run(self) -> None:
        try:
            rest = await self._loop()
        finally:
            self._task = None
            if self._finished is not None:
                self._finished.set()
        # Stopped meanwhile (cancelled before its first await, which a step with
        # nothing due never reaches): no alarm may hold on to this owner.
        if rest is None or self._stopped or self._agent.closed:
            self._stop()
            return
        self._ledger.fold().compact()
        if rest.wake_ms is not None:
            self._alarm.set(self, rest.wake_ms, self.recompute)

    async def _loop(self) -> _Rest | None:
        """Run until there is nothing to do but wait for a time or a change (or stop: None)."""
        agent = self._agent
        # `when_idle()` returns at once for a closed agent: stop rather than spin.
        while not agent.closed:
            self._dirty = False
            waiter = await self._step()
            if waiter is None:
                return None
            if self._dirty:
                continue
            if isinstance(waiter, _Rest):
                return waiter
            # `recompute()` cancels just this scope; the loop then derives again.
            with anyio.CancelScope() as scope:
                self._wait_scope = scope
                try:
                    await waiter()
                finally:
                    self._wait_scope = None
        return None

    async def _step(self) -> Callable[[], Awaitable[None]] | _Rest | None:
        """Act on the fold once; return what to wait for next, or None to stop."""
        agent = self._agent
        fold = self._ledger.fold()
        if fold.error is not None:
            await self._report(fold.error)
            return None
        if self._orphans and not await self._requeue():
            return None
        now = agent.clock.wall_ms()
        due = False
        wake: int | None = None
        for reminder in fold.reminders():
            planned = self._ledger.plan(reminder, now)
            due = due or planned.due is not None
            if planned.wake_ms is not None and (wake is None or planned.wake_ms < wake):
                wake = planned.wake_ms
        if due:
            held = await self._admit(now)
            if held is not None:
                return held
            attempt = await self._attempt()
            if attempt is not _Attempt.DISPATCHED:
                self._pacer.give_back(now)
            if attempt is _Attempt.FAULTED:
                return None
            if attempt in (_Attempt.BUSY, _Attempt.WAITING):
                return agent.when_idle
            return anyio.lowlevel.checkpoint
        self._pacer.forget(self)
        return _Rest(wake)

    # -- budgets ----------------------------------------------------------

    def _session_budget(self) -> SessionBudget:
        if self._budget is None:
            config = self._ledger.config
            self._budget = SessionBudget.of_log(
                self._agent.session,
                config.max_deliveries_per_hour,
                config.max_deliveries_per_day,
                self._agent.clock.wall_ms(),
            )
        return self._budget

    async def _admit(self, now: int) -> _Rest | None:
        """None when a delivery may start now; else what to rest for (`budget`)."""
        budget = self._session_budget()
        blocked = budget.blocked_until(now)
        if blocked is not None:
            self._pacer.forget(self)
            await self._tell_deferred(budget, now, blocked)
            return _Rest(blocked)
        if not self._pacer.admit(self, now, self.recompute):
            log.info(
                "session %s: a reminder is due but the host's deliveries per minute are spent; "
                "it waits for its turn (%d waiting)",
                self._agent.session.id,
                self._pacer.waiting,
            )
            return _Rest(None)
        return None

    async def _tell_deferred(self, budget: SessionBudget, now: int, until: int) -> None:
        """Tell the person (at most once an hour) that the Session's delivery budget is spent."""
        agent = self._agent
        limit, size = budget.limit_hit(now)
        async with self._ledger.lock:
            if deferral_told(agent.session, now):
                return
            log.warning(
                "session %s: %d reminder turns in the last %s, the most it may start; "
                "due reminders wait until %s",
                agent.session.id,
                size,
                limit,
                format_timestamp(until),
            )
            self._ledger.append_deferred(limit, size, until)
            await self._confirm("the notice of deferred reminders")

    async def _report(self, error: FoldError) -> None:
        """Tell the person once that this Session's schedule log was rejected."""
        agent = self._agent
        log.warning(
            "session %s: the schedule log is invalid at seq %d (%s); "
            "no reminder of this Session will be delivered",
            agent.session.id,
            error.seq,
            error.reason,
        )
        async with self._ledger.lock:
            if noticed(agent.session, error):
                return
            self._ledger.append_notice(error)
            await self._confirm("the notice of the invalid schedule log")

    # -- follow-ups an earlier lifecycle lost ------------------------------

    async def _requeue(self) -> bool:
        """Queue again the follow-ups noted at install; False once the agent closed."""
        try:
            await self._agent.run_maintenance(self._requeue_orphans, wait=True)
        except AgentClosed:
            return False
        return True

    async def _requeue_orphans(self) -> None:
        orphans, self._orphans = self._orphans, ()
        for group in requeue_groups(orphans):
            self._queue_again(group)

    def _queue_again(self, group: list[Unanswered]) -> None:
        """Queue one follow-up for the dispatches of one earlier delivery (counted, never
        refused, by the Session's budget: it is a turn, owed since before the crash)."""
        agent = self._agent
        now = agent.clock.wall_ms()
        seqs = ", ".join(str(item.seq) for item in group)
        try:
            parts = [
                Part(
                    Reminder.start(item.record(), item.seq, item.seq, 0),
                    Due(item.occurrence_ms, item.missed),
                    item.following_ms,
                    item.seq,
                )
                for item in group
            ]
            text, source = followup_message(
                parts, now, fires_when_closed=self._ledger.fires_when_closed
            )
            source["requeued"] = True
            agent.followup(text, source)
        except Exception:
            log.exception(
                "session %s: the follow-up of dispatch %s could not be queued again; its "
                "receipt stays, its turn does not run",
                agent.session.id,
                seqs,
            )
            return
        self._session_budget().record(now)
        log.info(
            "session %s: queued again the follow-up of dispatch %s, which an earlier run "
            "delivered but never stored",
            agent.session.id,
            seqs,
        )

    # -- delivery ---------------------------------------------------------

    async def _attempt(self) -> _Attempt:
        agent = self._agent
        # From the moment the agent is ours until the dispatch is durable, this is
        # the host's urgent work: its background work (follow-up turns, the search
        # index, alerts) waits for it — not while we wait for a busy agent.
        with contextlib.ExitStack() as urgency:

            async def urgent_dispatch() -> _Attempt:
                urgency.enter_context(agent.background.urgent())
                return await self._locked_dispatch()

            try:
                attempt = await agent.run_maintenance(urgent_dispatch, wait=True)
            except AgentClosed:
                return _Attempt.BUSY
            # `_locked_dispatch` returns holding the ledger lock; nothing awaits before
            # the dispatch barrier, so it covers exactly what the task appended.
            try:
                if attempt is _Attempt.DISPATCHED and await self._confirm("a reminder dispatch"):
                    self._measures.dispatched(self._delivering, agent.clock.wall_ms())
            finally:
                self._ledger.lock.release()
            return attempt

    async def _confirm(self, what: str) -> bool:
        """Await the barrier for `what`, just appended; False (logged) when storage did not
        confirm it — the store retries its retained batch at the next flush."""
        try:
            await self._ledger.barrier()
        except BarrierFailed as failure:
            log.warning(
                "session %s: %s was appended but not confirmed (%s)",
                self._agent.session.id,
                what,
                failure,
            )
            return False
        return True

    async def _locked_dispatch(self) -> _Attempt:
        """Take the ledger lock (`_attempt` releases it after the dispatch barrier), preflight,
        and dispatch what is due."""
        lock = self._ledger.lock
        try:
            # A free lock is taken without a trip round the event loop: in a storm that
            # trip is one more pass over every due Session before its dispatch. Only
            # here: with the whole lock made fast (`fast_acquire`, as `dsh.base.locks`
            # has it), a run of the crash-rounds wake test delivered no reminder in
            # 180 s (not diagnosed), so the tools keep the lock's yield.
            lock.acquire_nowait()
        except anyio.WouldBlock:
            await lock.acquire()
        try:
            try:
                await self._ledger.barrier()
            except BarrierFailed as failure:
                log.warning(
                    "session %s: a reminder is due but the store was not confirmed (%s); "
                    "it stays active until the agent is next idle or reminders are managed",
                    self._agent.session.id,
                    failure,
                )
                return _Attempt.WAITING
            return await self._dispatch_due()
        except BaseException:
            lock.release()
            raise

    async def _dispatch_due(self) -> _Attempt:
        agent = self._agent
        ledger = self._ledger
        fold = ledger.fold()
        now = agent.clock.wall_ms()
        if fold.error is not None:
            return _Attempt.STALE
        candidates = [
            (planned.due.occurrence_ms, reminder.seq, reminder, planned.due)
            for reminder in fold.reminders()
            if (planned := ledger.plan(reminder, now)).due is not None
        ]
        if not candidates:
            return _Attempt.STALE
        taken = coalesce(
            [(occurrence, seq, reminder) for occurrence, seq, reminder, _ in candidates]
        )
        owed = {reminder.seq: due for _, _, reminder, due in candidates}
        named = ", ".join(reminder.id for reminder in taken)
        try:
            parts = await self._parts(taken, owed)
            text, source = followup_message(parts, now, fires_when_closed=ledger.fires_when_closed)
            agent.followup(text, source)
        except Exception:
            log.exception(
                "session %s: reminder %s could not be queued; it stays active until the "
                "agent is next idle or reminders are managed",
                agent.session.id,
                named,
            )
            return _Attempt.WAITING
        self._delivering = tuple(part.due.occurrence_ms for part in parts)
        try:
            for part in parts:
                ledger.append_dispatch(part.reminder, part.due)
        except Exception:
            log.exception(
                "session %s: reminder %s was queued but its dispatch could not be appended; "
                "the schedule owner of this agent stops",
                agent.session.id,
                named,
            )
            return _Attempt.FAULTED
        self._session_budget().record(now)
        return _Attempt.DISPATCHED

    async def _parts(self, taken: list[Reminder], owed: dict[int, Due]) -> list[Part]:
        """What each reminder of one delivery delivers (`owed`: its due occurrence, by seq);
        their dispatches come next in the log. Counting `missed` may leave the event loop
        (`_count_missed`), so this comes before the follow-up is queued, never between it
        and the dispatches."""
        first_seq = len(self._agent.session)
        parts: list[Part] = []
        for offset, reminder in enumerate(taken):
            due = await _count_missed(reminder, owed[reminder.seq])
            following = following_occurrence(reminder, due.occurrence_ms)
            parts.append(Part(reminder, due, following, first_seq + offset))
        return parts


async def _count_missed(reminder: Reminder, due: Due) -> Due:
    """`due` with its `missed` counted (`plan.with_missed`); a cron rule's in a worker thread.

    An `every` rule's count is one division. A cron rule's is arithmetic a
    month at a time (`CronSeries.count_between`): about a millisecond for a
    minute rule missed for months, seconds for a clock set millennia ahead. It never
    runs on the event loop, which keeps serving every other Session and
    request meanwhile; the owner holds the ledger lock and the agent's
    maintenance phase across it, so nothing it decided changes.
    """
    if due.occurrence_ms == reminder.next_ms:
        return due  # the owed occurrence itself: nothing before it was missed
    if not isinstance(reminder.record.rule, CronRule):
        return with_missed(reminder, due)
    return await anyio.to_thread.run_sync(with_missed, reminder, due)
