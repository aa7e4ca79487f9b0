"""`SchedulePlugin`: the entry point `tool-schedule` in the `dsh.plugins` group.

The loader instantiates the class once per Host with a `PluginContext` (and a
validated `ScheduleConfig`, or None for the defaults). The plugin keeps no
module-level state: everything it runs lives in installation scopes joined to
an agent and to this instance's own scope.

- `dsh_agent_published(agent)`: installs the three tools and one owner in each
  *root* agent published after the plugin loaded. Child agents are skipped;
  agents published earlier, cold history reads and other Hosts never reach this
  instance.
- `dsh_event_view(session, event)`: the reminder receipt of a durable
  `schedule/change` dispatch, None for every other event (malformed ones too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from pydantic import JsonValue

from dsh import hookimpl

from .config import ScheduleConfig
from .installation import install
from .presentation import schedule_reminder_presentation
from .protocol import EVENT_TYPE

if TYPE_CHECKING:
    from dsh import Agent, PluginContext, SessionEvent, SessionLog

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

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        if agent.is_root:
            install(self.context, agent, self.config)

    @hookimpl
    def dsh_event_view(
        self, session: SessionLog, event: SessionEvent
    ) -> dict[str, JsonValue] | None:
        if event.type != EVENT_TYPE:
            return None
        return schedule_reminder_presentation(session, event.seq)
