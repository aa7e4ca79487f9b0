"""dsh-client-ui-schedule: the browser UI of reminders (cards, panel, notifications)."""

from __future__ import annotations

from .plugin import IMPORTS, MODULE_PATH, ScheduleUiPlugin

__all__ = ["IMPORTS", "MODULE_PATH", "ScheduleUiPlugin"]
