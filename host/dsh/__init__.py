"""dsh: a small, pluggable agent host with durable, session-local reminders.

This module is the public API: `__all__` lists every name plugins (and their
tests, with `dsh.testing`) may use. Plugins import from `dsh` only, never
from `dsh.<module>`, whose layout may change between releases.
"""

from .actions import ActionArguments
from .agent import Agent, AgentBusy, AgentClosed, AgentPhase
from .clock import Clock, SystemClock
from .commands import CommandContext, Streams, add_store_options
from .errors import ActionError, CodedError, raise_errors
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
from .hookspecs import CommandRun, RegisterCommand, hookimpl
from .host import SessionNotFound
from .jsontypes import JsonLike, to_json
from .listeners import Listeners
from .models.base import Message, ModelAdapter, ModelError, ModelReply, ModelRequest
from .persistence.backend import StorageError
from .plugins import ClientModule, PluginContext
from .scope import Disposer, Scope, ScopeClosed
from .session import (
    END_SEED,
    InvalidSessionId,
    Session,
    SessionEvent,
    SessionHeader,
    SessionLog,
    validate_session_id,
)
from .store import FlushError, SessionClosed, SessionFlushed, SessionStore
from .tasks import TaskSet
from .tools import (
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
from .validation import describe

__version__ = "0.1.0"

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
    "SessionStore",
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
