"""dsh: a small, pluggable agent host with durable, session-local reminders.

This module is the public API: `__all__` lists every name plugins (and their
tests, with `dsh.testing`) may use. Plugins import from `dsh` only, never
from `dsh.<module>`, whose layout may change between releases.
"""

from .agents.agent import Agent, AgentPhase
from .agents.errors import AgentBusy, AgentClosed, BarrierFailed, DuplicateTool, ToolError
from .agents.tools import Tool, ToolArguments, ToolContext, ToolOutcome, ToolRegistry, flush_barrier
from .attention.alert import Alert, SnoozeAction
from .attention.feed import AlertFeed, AlertSink
from .base.clock import Clock, SystemClock
from .base.deprecation import renamed_module_names
from .base.errors import CodedError, ScopeClosed, raise_errors
from .base.jsontypes import JsonLike, to_json
from .base.listeners import Listeners
from .base.metrics import Metrics
from .base.scope import Disposer, Scope
from .base.tasks import TaskSet
from .base.validation import describe
from .base.version import VERSION
from .base.visible import visible
from .models.base import Message, ModelAdapter, ModelReply, ModelRequest, ToolCall
from .models.demo import DemoSkill
from .models.errors import ModelError
from .models.registry import ModelContext
from .persistence.errors import SessionNotFound, StorageError
from .persistence.location import StorageLocation
from .plugins.actions import ActionArguments
from .plugins.commands import CommandContext, Streams, add_store_options
from .plugins.context import ClientModule, PluginContext, SessionActionRunner
from .plugins.errors import (
    ActionError,
    HostNotRunning,
    MissingPlugin,
    PluginConfigError,
    PluginLoadError,
)
from .plugins.hookspecs import CommandRun, RegisterCommand, RegisterModel, hookimpl
from .session.errors import FlushError, InvalidSessionId, PayloadError, SessionClosed
from .session.event import SessionEvent
from .session.events import (
    AssistantMessage,
    ErrorInfo,
    SessionTitle,
    Source,
    ToolCallRecord,
    ToolResult,
    TurnEnd,
    UserMessage,
    validate_time_zone,
)
from .session.events import decode as decode_host_event
from .session.header import SessionHeader
from .session.ids import validate_session_id
from .session.live import LiveSessions, SessionFlushed
from .session.log import Session, SessionLog
from .session.types import (
    ASSISTANT_MESSAGE,
    END_SEED,
    SESSION_TITLE,
    TOOL_RESULT,
    TURN_END,
    USER_MESSAGE,
)

__version__ = VERSION

#: Public names renamed by the third edition: still importable, with a DeprecationWarning.
__getattr__ = renamed_module_names("dsh", {"SessionStore": ("LiveSessions", LiveSessions)})

__all__ = [
    "ASSISTANT_MESSAGE",
    "END_SEED",
    "SESSION_TITLE",
    "TOOL_RESULT",
    "TURN_END",
    "USER_MESSAGE",
    "ActionArguments",
    "ActionError",
    "Agent",
    "AgentBusy",
    "AgentClosed",
    "AgentPhase",
    "Alert",
    "AlertFeed",
    "AlertSink",
    "AssistantMessage",
    "BarrierFailed",
    "ClientModule",
    "Clock",
    "CodedError",
    "CommandContext",
    "CommandRun",
    "DemoSkill",
    "Disposer",
    "DuplicateTool",
    "ErrorInfo",
    "FlushError",
    "HostNotRunning",
    "InvalidSessionId",
    "JsonLike",
    "Listeners",
    "LiveSessions",
    "Message",
    "Metrics",
    "MissingPlugin",
    "ModelAdapter",
    "ModelContext",
    "ModelError",
    "ModelReply",
    "ModelRequest",
    "PayloadError",
    "PluginConfigError",
    "PluginContext",
    "PluginLoadError",
    "RegisterCommand",
    "RegisterModel",
    "Scope",
    "ScopeClosed",
    "Session",
    "SessionActionRunner",
    "SessionClosed",
    "SessionEvent",
    "SessionFlushed",
    "SessionHeader",
    "SessionLog",
    "SessionNotFound",
    "SessionTitle",
    "SnoozeAction",
    "Source",
    "StorageError",
    "StorageLocation",
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
    "visible",
]
