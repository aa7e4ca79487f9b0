"""The `client-ui-schedule` plugin: ships the reminder renderer to the browser.

The plugin has no server-side behaviour. Its one hook hands the host the
packaged ES module, which the host serves under
`/plugins/client-ui-schedule/schedule-reminder.js`; the browser imports it and
calls its `register(registry)`.
"""

from __future__ import annotations

from pathlib import Path

from dsh import ClientModule, PluginContext, hookimpl

__all__ = ["EVENT_TYPES", "MODULE_PATH", "ScheduleUiPlugin"]

MODULE_PATH = Path(__file__).parent / "static" / "schedule-reminder.js"
"""The packaged browser module (package data inside the wheel)."""

EVENT_TYPES = ("schedule/change", "schedule/notice")
"""The durable event types whose views the module renders (receipts and notices)."""


class ScheduleUiPlugin:
    """One instance per Host; takes no configuration."""

    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        """The reminder renderer module, for `schedule/change` and `schedule/notice` views."""
        return [ClientModule(path=MODULE_PATH, event_types=EVENT_TYPES)]
