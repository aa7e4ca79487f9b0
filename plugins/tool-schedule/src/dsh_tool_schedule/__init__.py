"""dsh-tool-schedule: durable, session-local reminders (DESIGN §8, §8b).

The plugin class is `dsh_tool_schedule.plugin:SchedulePlugin` (entry point
`tool-schedule`). The protocol decoder, the fold, the plan, the views, the
presentation and the state functions are public so that hosts, tools and
tests can read schedule logs without an agent.
"""

from .config import ScheduleConfig
from .fold import FoldError, Reminder, ScheduleFold
from .frame import reminder_frame
from .ids import ReminderId
from .installation import InstallationError
from .ledger import ScheduleConflict
from .notice import NOTICE_TYPE, notice_view
from .plan import Due, Plan, plan
from .plugin import SchedulePlugin
from .presentation import schedule_reminder_presentation
from .protocol import EVENT_TYPE, PROTOCOL_VERSION, ProtocolError, Record, decode_change
from .state import session_state, session_wake_at
from .views import DELIVERY_MODE, reminder_view

__all__ = [
    "DELIVERY_MODE",
    "EVENT_TYPE",
    "NOTICE_TYPE",
    "PROTOCOL_VERSION",
    "Due",
    "FoldError",
    "InstallationError",
    "Plan",
    "ProtocolError",
    "Record",
    "Reminder",
    "ReminderId",
    "ScheduleConfig",
    "ScheduleConflict",
    "ScheduleFold",
    "SchedulePlugin",
    "decode_change",
    "notice_view",
    "plan",
    "reminder_frame",
    "reminder_view",
    "schedule_reminder_presentation",
    "session_state",
    "session_wake_at",
]
