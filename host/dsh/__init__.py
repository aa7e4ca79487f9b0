"""dsh: a small, pluggable agent host with durable, session-local reminders.

The public API for plugins is re-exported here.
"""

from .agent import Agent, AgentBusy, AgentClosed, AgentPhase
from .clock import Clock, SystemClock
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

__version__ = "0.1.0"

__all__ = [
    "END_SEED",
    "Agent",
    "AgentBusy",
    "AgentClosed",
    "AgentPhase",
    "ClientModule",
    "Clock",
    "Disposer",
    "FlushError",
    "PluginContext",
    "Scope",
    "ScopeClosed",
    "Session",
    "SessionEvent",
    "SessionFlushed",
    "SessionHeader",
    "SessionLog",
    "SessionStore",
    "SystemClock",
    "TaskSet",
    "Tool",
    "ToolArguments",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolOutcome",
    "ToolRegistry",
    "__version__",
    "hookimpl",
    "validate_session_id",
]
