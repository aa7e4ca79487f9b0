"""dsh: a small, pluggable agent host with durable, session-local reminders.

This module is the public API: `__all__` lists every name plugins (and their
tests, with `dsh.testing`) may use. Plugins import from `dsh` only, never
from `dsh.<module>`, whose layout may change between releases.
"""

from .agents.agent import Agent, AgentBusy, AgentClosed, AgentPhase
from .agents.tools import (
    BarrierFailed,
    DuplicateTool,
    Tool,
    ToolArguments,
    ToolCall,
    ToolContext,
    ToolError,
    ToolOutcome,
    ToolRegistry,
    flush_barrier,
)
from .base.clock import Clock, SystemClock
from .base.deprecation import deprecated
from .base.errors import ActionError, CodedError, raise_errors
from .base.jsontypes import JsonLike, to_json
from .base.listeners import Listeners
from .base.scope import Disposer, Scope, ScopeClosed
from .base.tasks import TaskSet
from .base.validation import describe
from .host.host import SessionNotFound
from .models.base import Message, ModelAdapter, ModelError, ModelReply, ModelRequest
from .persistence.backend import StorageError
from .plugins.actions import ActionArguments
from .plugins.commands import CommandContext, Streams, add_store_options
from .plugins.context import ClientModule, PluginContext
from .plugins.hookspecs import CommandRun, RegisterCommand, hookimpl
from .session.events import (
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
from .session.events import decode as decode_host_event
from .session.live import FlushError, LiveSessions, SessionClosed, SessionFlushed
from .session.log import (
    END_SEED,
    InvalidSessionId,
    Session,
    SessionEvent,
    SessionHeader,
    SessionLog,
    validate_session_id,
)

__version__ = "0.1.0"

#: Public names renamed by the third edition: still importable, with a DeprecationWarning.
_RENAMED = {"SessionStore": ("LiveSessions", LiveSessions)}


def __getattr__(name: str) -> object:
    if name in _RENAMED:
        new, value = _RENAMED[name]
        deprecated(f"dsh.{name}", f"dsh.{new}")
        return value
    raise AttributeError(f"module 'dsh' has no attribute {name!r}")

__all__ = [
    "END_SEED",
    "ActionArguments",
    "ActionError",
    "Agent",
    "AgentBusy",
    "AgentClosed",
    "AgentPhase",
    "AssistantMessage",
    "BarrierFailed",
    "ClientModule",
    "Clock",
    "CodedError",
    "CommandContext",
    "CommandRun",
    "Disposer",
    "DuplicateTool",
    "ErrorInfo",
    "FlushError",
    "InvalidSessionId",
    "JsonLike",
    "Listeners",
    "LiveSessions",
    "Message",
    "ModelAdapter",
    "ModelError",
    "ModelReply",
    "ModelRequest",
    "PayloadError",
    "PluginContext",
    "RegisterCommand",
    "Scope",
    "ScopeClosed",
    "Session",
    "SessionClosed",
    "SessionEvent",
    "SessionFlushed",
    "SessionHeader",
    "SessionLog",
    "SessionNotFound",
    "SessionTitle",
    "Source",
    "StorageError",
    "Streams",
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
    "add_store_options",
    "decode_host_event",
    "describe",
    "flush_barrier",
    "hookimpl",
    "raise_errors",
    "to_json",
    "validate_session_id",
    "validate_time_zone",
]
