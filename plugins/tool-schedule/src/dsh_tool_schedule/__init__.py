"""dsh-tool-schedule: durable, session-local reminders (DESIGN §8).

The plugin class is `dsh_tool_schedule.plugin:SchedulePlugin` (entry point
`tool-schedule`). The protocol decoder, the fold and the presentation function
are public so that hosts, tools and tests can read schedule logs without an
agent.
"""

from .config import ScheduleConfig
from .fold import ActiveReminder, FoldError, ScheduleFold
from .frame import reminder_frame
from .ids import ReminderId
from .installation import InstallationError
from .plugin import SchedulePlugin
from .presentation import schedule_reminder_presentation
from .protocol import (
    EVENT_TYPE,
    CreateChange,
    DeleteChange,
    DispatchChange,
    ProtocolError,
    ReminderRecord,
    decode_change,
)
from .views import DELIVERY_MODE, reminder_view

__all__ = [
    "DELIVERY_MODE",
    "EVENT_TYPE",
    "ActiveReminder",
    "CreateChange",
    "DeleteChange",
    "DispatchChange",
    "FoldError",
    "InstallationError",
    "ProtocolError",
    "ReminderId",
    "ReminderRecord",
    "ScheduleConfig",
    "ScheduleFold",
    "SchedulePlugin",
    "decode_change",
    "reminder_frame",
    "reminder_view",
    "schedule_reminder_presentation",
]
