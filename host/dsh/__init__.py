"""dsh: a small, pluggable agent host with durable, session-local reminders.

The public API for plugins is re-exported here.
"""

from .agent import Agent, AgentBusy, AgentClosed, AgentPhase
from .clock import Clock, SystemClock
from .events import (
    AssistantMessage,
    ErrorInfo,
    PayloadError,
    SessionTitle,
    Source,
    ToolCallRecord,
    ToolResult,
    TurnEnd,
    UserMessage,
    validate_time_zone,
)
from .events import decode as decode_host_event
from .hookspecs import hookimpl
from .plugins import ClientModule, PluginContext
from .scope import Disposer, Scope, ScopeClosed
from .session import (
    END_SEED,
    Session,
    SessionEvent,
    SessionHeader,
    SessionLog,
    validate_session_id,
)
from .store import FlushError, SessionFlushed, SessionStore
from .tasks import TaskSet
from .tools import Tool, ToolArguments, ToolCall, ToolContext, ToolError, ToolOutcome, ToolRegistry
from .validation import describe

__version__ = "0.1.0"

__all__ = [
    "END_SEED",
    "Agent",
    "AgentBusy",
    "AgentClosed",
    "AgentPhase",
    "AssistantMessage",
    "ClientModule",
    "Clock",
    "Disposer",
    "ErrorInfo",
    "FlushError",
    "PayloadError",
    "PluginContext",
    "Scope",
    "ScopeClosed",
    "Session",
    "SessionEvent",
    "SessionFlushed",
    "SessionHeader",
    "SessionLog",
    "SessionStore",
    "SessionTitle",
    "Source",
    "SystemClock",
    "TaskSet",
    "Tool",
    "ToolArguments",
    "ToolCall",
    "ToolCallRecord",
    "ToolContext",
    "ToolError",
    "ToolOutcome",
    "ToolRegistry",
    "ToolResult",
    "TurnEnd",
    "UserMessage",
    "__version__",
    "decode_host_event",
    "describe",
    "hookimpl",
    "validate_session_id",
    "validate_time_zone",
]
