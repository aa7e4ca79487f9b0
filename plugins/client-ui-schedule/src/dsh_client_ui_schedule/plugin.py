"""The `client-ui-schedule` plugin: ships the reminder UI to the browser.

The plugin has no server-side behaviour. Its one hook hands the host the
packaged ES module, which the host serves under
`/plugins/client-ui-schedule/schedule-reminder.js`, together with the modules
it imports (`IMPORTS`, served next to it); the browser imports it and calls its
`register(registry)`: the receipt (with its Snooze and Done), snooze and notice
cards, the reminders panel, the Session list's status and the notification of
a delivered reminder.
"""

from __future__ import annotations

from pathlib import Path

from dsh import ClientModule, PluginContext, hookimpl

__all__ = ["EVENT_TYPES", "IMPORTS", "MODULE_PATH", "ScheduleUiPlugin"]

STATIC = Path(__file__).parent / "static"
MODULE_PATH = STATIC / "schedule-reminder.js"
"""The packaged browser module (package data inside the wheel)."""

IMPORTS = tuple(
    STATIC / name
    for name in (
        "schedule-after.js",
        "schedule-card.js",
        "schedule-dom.js",
        "schedule-panel.js",
        "schedule-state.js",
        "schedule-words.js",
    )
)
"""The modules `schedule-reminder.js` imports, one idea each (served next to it)."""

EVENT_TYPES = ("schedule/change", "schedule/notice", "schedule/snooze")
"""The durable event types whose views the module renders (receipts, notices, snoozes)."""


class ScheduleUiPlugin:
    """One instance per Host; takes no configuration."""

    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context

    @hookimpl
    def dsh_client_modules(self) -> list[ClientModule]:
        """The reminder UI module, for the views of the plugin's three event types."""
        return [ClientModule(path=MODULE_PATH, event_types=EVENT_TYPES, imports=IMPORTS)]
