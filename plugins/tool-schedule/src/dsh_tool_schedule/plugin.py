"""`SchedulePlugin`: the entry point `tool-schedule` in the `dsh.plugins` group.

The loader instantiates the class once per Host with a `PluginContext` (and a
validated `ScheduleConfig`, or None for the defaults). The plugin keeps no
module-level state: everything it runs lives in installation scopes joined to
an agent and to this instance's own scope.

- `dsh_agent_published(agent)`: installs the four tools and one owner in each
  *root* agent published after the plugin loaded; the owners wait for their
  next target on one `Alarm` per clock (`alarm`), closed with the plugin, and
  share one `HostPacer` per clock (`budget`: the host's reminder turns per
  minute). Child agents are skipped;
  agents published earlier, cold history reads and other Hosts never reach this
  instance.
- `dsh_event_view(session, event)`: the reminder receipt of a `schedule/change`
  dispatch the fold accepts, the warning card of a `schedule/notice`, the
  line of a `schedule/snooze` (`snoozes`), None for every other event
  (malformed ones too).
- `dsh_session_alert(session, event)`: every delivered reminder (a dispatch
  that gets a receipt) is an alert: its prompt, when it was due and how late
  (`alerts`).
- `dsh_session_state(session)`: `{"reminders": [view, ...], "firesWhenClosed",
  "error"?}`, a pure function of the durable log (`state.session_state`,
  planned as of its last event) and of whether the host wakes closed Sessions.
- `dsh_session_wake_at(session)`: the earliest time an active, unpaused
  reminder needs the Session live, from the log alone (`state.session_wake_at`).
- `dsh_session_check(session)`: the fold's refusal of a log brought in from
  outside (`dsh sessions import`), folded afresh (no cache: the log is not
  stored yet), or None.

These three read the fold of the log through one `FoldCache` per plugin
instance (cleared when the plugin's scope closes): a log read before is
folded only from where the held fold stopped, so a cold history page, a
state frame or a hibernation of a long Session costs the events appended
since, not the whole log. A live `Session` handed to `dsh_event_view` is
folded only up to the event asked about (the host asks only about durable
ones). The ledger of an agent published for a Session the cache holds starts
from that fold.
- `dsh_session_action(agent, name, args)`: `delete`, `pause`, `resume`,
  `snooze` (of a reminder, or of an occurrence already delivered) on the
  agent's ledger (`actions`).
- `dsh_cli_commands(register)`: `dsh reminders list` (`cli`).
- `/metrics`: its dispatches, their lateness and the overdue reminders of live
  Sessions (`measures`, registered in the plugin's scope).
- `dsh_demo_skills()`: what the host's offline demo model understands of
  reminders (`demo`): a request in plain words becomes a tool call.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, ClassVar

from pydantic import JsonValue

from dsh import Session, hookimpl

from .actions import start_action
from .alarm import Alarms
from .alerts import reminder_alert
from .budget import HostPacer
from .cache import FoldCache
from .cli import register_commands
from .config import ScheduleConfig
from .demo import ScheduleDemoSkill
from .fold import ScheduleFold
from .installation import ScheduleInstallation, install
from .measures import DeliveryMeasures
from .notice import NOTICE_TYPE, notice_view
from .presentation import schedule_reminder_presentation
from .protocol import EVENT_TYPE
from .snoozes import SNOOZE_TYPE, snooze_view
from .state import session_state, session_wake_at

if TYPE_CHECKING:
    from dsh import (
        Agent,
        Clock,
        DemoSkill,
        JsonLike,
        PluginContext,
        RegisterCommand,
        SessionEvent,
        SessionLog,
    )

__all__ = ["SchedulePlugin"]


class SchedulePlugin:
    """Durable, session-local reminders for root agents."""

    Config: ClassVar[type[ScheduleConfig]] = ScheduleConfig

    def __init__(self, context: PluginContext[ScheduleConfig | None]) -> None:
        config = context.config if context.config is not None else ScheduleConfig()
        if not isinstance(config, ScheduleConfig):
            raise TypeError(
                f"plugin {context.name!r} expects a ScheduleConfig, got {type(config).__name__}"
            )
        self.context = context
        self.config = config
        self.folds = FoldCache()
        context.scope.add(self.folds.clear)
        self.alarms = Alarms(context.group, config)
        context.scope.add(self.alarms.aclose)
        self._pacers: dict[Clock, HostPacer] = {}
        # Each installation removes itself when its scope closes.
        self._installations: dict[Agent, ScheduleInstallation] = {}
        self.measures = DeliveryMeasures(context.metrics, context.scope, self._overdue)

    @property
    def grace_ms(self) -> int:
        """How late a `misfire: "skip"` occurrence may still be delivered (ms)."""
        return self.config.misfire_grace_seconds * 1000

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        if agent.is_root:
            alarm = self.alarms.for_clock(agent.clock)
            pacer = self._pacers.get(agent.clock)
            if pacer is None:
                per_minute = self.config.host_deliveries_per_minute
                pacer = self._pacers[agent.clock] = HostPacer(per_minute, alarm)
            install(
                self.context,
                agent,
                self.config,
                alarm,
                pacer,
                self._installations,
                self.folds,
                self.measures,
            )

    def _overdue(self) -> int:
        """Active reminders of the live installations that are due now (`/metrics`)."""
        count = 0
        for agent, installation in list(self._installations.items()):
            ledger = installation.ledger
            fold = ledger.fold()
            now = agent.clock.wall_ms()
            count += sum(1 for r in fold.reminders() if ledger.plan(r, now).due is not None)
        return count

    @hookimpl
    def dsh_event_view(
        self, session: SessionLog, event: SessionEvent
    ) -> dict[str, JsonValue] | None:
        if event.type == NOTICE_TYPE:
            return notice_view(event.data)
        if event.type == SNOOZE_TYPE:
            return snooze_view(session, event.seq)
        return self._receipt(session, event)

    @hookimpl
    def dsh_session_alert(
        self, session: SessionLog, event: SessionEvent
    ) -> dict[str, JsonValue] | None:
        receipt = self._receipt(session, event)
        if receipt is None:
            return None
        snooze: dict[str, JsonValue] = {
            "plugin": self.context.name,
            "action": "snooze",
            "args": {"dispatchSeq": event.seq},
        }
        return {**reminder_alert(receipt, session.id), "snooze": snooze}

    def _receipt(self, session: SessionLog, event: SessionEvent) -> dict[str, JsonValue] | None:
        if event.type != EVENT_TYPE:
            return None
        # A live Session may hold events not confirmed yet: fold it only up to this one.
        stop = event.seq + 1 if isinstance(session, Session) else None
        fold = self.folds.past(session, event.seq, stop)
        return schedule_reminder_presentation(session, event.seq, fold=fold)

    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> JsonLike:
        return session_state(
            session,
            grace_ms=self.grace_ms,
            fold=self.folds.fold(session),
            fires_when_closed=self.context.wakes_cold_sessions,
        )

    @hookimpl
    def dsh_session_check(self, session: SessionLog) -> str | None:
        error = ScheduleFold.of(session).error
        if error is None:
            return None
        return f"its schedule log is invalid at seq {error.seq}: {error.reason}"

    @hookimpl
    def dsh_session_wake_at(self, session: SessionLog) -> int | None:
        return session_wake_at(session, grace_ms=self.grace_ms, fold=self.folds.fold(session))

    @hookimpl
    def dsh_session_action(
        self, agent: Agent, name: str, args: dict[str, JsonValue]
    ) -> Awaitable[JsonLike] | None:
        installation = self._installations.get(agent)
        ledger = None if installation is None else installation.ledger
        live = None if ledger is None or ledger.closed else ledger
        return start_action(name, args, live, agent.session.id)

    @hookimpl
    def dsh_cli_commands(self, register: RegisterCommand) -> None:
        register_commands(register, grace_ms=self.grace_ms)

    @hookimpl
    def dsh_demo_skills(self) -> list[DemoSkill]:
        return [ScheduleDemoSkill()]
