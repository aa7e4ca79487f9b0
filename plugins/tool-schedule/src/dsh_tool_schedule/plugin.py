"""`SchedulePlugin`: the entry point `tool-schedule` in the `dsh.plugins` group.

The loader instantiates the class once per Host with a `PluginContext` (and a
validated `ScheduleConfig`, or None for the defaults). The plugin keeps no
module-level state: everything it runs lives in installation scopes joined to
an agent and to this instance's own scope.

- `dsh_agent_published(agent)`: installs the four tools and one owner in each
  *root* agent published after the plugin loaded. Child agents are skipped;
  agents published earlier, cold history reads and other Hosts never reach this
  instance.
- `dsh_event_view(session, event)`: the reminder receipt of a `schedule/change`
  dispatch the fold accepts, the warning card of a `schedule/notice`, None for
  every other event (malformed ones too). Receipts of one log reuse one
  incremental fold per log object (held weakly), so a history page costs one
  fold, not one per receipt. The host calls it from worker threads for cold
  logs, so that cache is behind a lock.
- `dsh_session_state(session)`: `{"reminders": [view, ...], "error"?}`, a pure
  function of the durable log (`state.session_state`, planned as of its last
  event).
- `dsh_session_wake_at(session)`: the earliest time an active, unpaused
  reminder needs the Session live, from the log alone (`state.session_wake_at`).
- `dsh_session_action(agent, name, args)`: `delete`, `pause`, `resume`,
  `snooze` on the agent's ledger (`actions`).
- `dsh_cli_commands(register)`: `dsh reminders list` (`cli`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Awaitable
from typing import TYPE_CHECKING, ClassVar

from pydantic import JsonValue

from dsh import hookimpl

from .actions import start_action
from .cli import register_commands
from .config import ScheduleConfig
from .fold import ScheduleFold
from .installation import ScheduleInstallation, install
from .notice import NOTICE_TYPE, notice_view
from .presentation import schedule_reminder_presentation
from .protocol import EVENT_TYPE
from .state import session_state, session_wake_at

if TYPE_CHECKING:
    from dsh import Agent, JsonLike, PluginContext, RegisterCommand, SessionEvent, SessionLog

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
        self._folds: weakref.WeakKeyDictionary[SessionLog, ScheduleFold] = (
            weakref.WeakKeyDictionary()
        )
        self._folds_lock = threading.Lock()
        self._installations: weakref.WeakKeyDictionary[Agent, ScheduleInstallation] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def grace_ms(self) -> int:
        """How late a `misfire: "skip"` occurrence may still be delivered (ms)."""
        return self.config.misfire_grace_seconds * 1000

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        if agent.is_root:
            self._installations[agent] = install(self.context, agent, self.config)

    @hookimpl
    def dsh_event_view(
        self, session: SessionLog, event: SessionEvent
    ) -> dict[str, JsonValue] | None:
        if event.type == NOTICE_TYPE:
            return notice_view(event.data)
        if event.type != EVENT_TYPE:
            return None
        return schedule_reminder_presentation(session, event.seq, fold=self._fold(session, event))

    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> JsonLike:
        return session_state(session, grace_ms=self.grace_ms)

    @hookimpl
    def dsh_session_wake_at(self, session: SessionLog) -> int | None:
        return session_wake_at(session, grace_ms=self.grace_ms)

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

    def _fold(self, log: SessionLog, event: SessionEvent) -> ScheduleFold | None:
        """This log's fold, read past `event`; None when the log cannot be held weakly."""
        with self._folds_lock:
            try:
                fold = self._folds.get(log)
                if fold is None:
                    fold = self._folds[log] = ScheduleFold(log.fold_start)
            except TypeError:  # not weakly referenceable: the presentation folds by itself
                return None
            return fold.advance(log, event.seq + 1) if fold.position <= event.seq else fold
