"""dsh-client-ui-schedule: the browser renderer for reminder receipts and schedule notices."""

from __future__ import annotations

from .plugin import MODULE_PATH, ScheduleUiPlugin

__all__ = ["MODULE_PATH", "ScheduleUiPlugin"]
