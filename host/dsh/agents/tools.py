"""Tools: what an agent can call, the per-agent registry and the invocation pipeline.

A `Tool` declares a name, a description and a strict pydantic input model, and
runs asynchronously with a `ToolContext`. Errors are values at the model
boundary: the pipeline (`invoke_tool`) turns every failure into a
`ToolOutcome` with `error = {"code", "message"}` that the model can read:

- arguments that are not a JSON object, are not finite JSON (`NaN`,
  `Infinity`, `1e400`), nest deeper or are longer than `dsh.limits` allows,
  or fail the input model → `invalid_arguments`;
- an unknown tool name → `unknown_tool`;
- a `ToolError` raised by the tool → its own code and message;
- a result that is not JSON, or deeper or longer than `dsh.limits` allows
  → `invalid_result` (a tool may return any `dsh.JsonLike`: ordinary dicts,
  lists and tuples, nested);
- any other exception → `internal_error` with a neutral sentence: the
  exception's text stays in the host's log (with its traceback and the
  plugin that registered the tool), never reaches the model's provider.

Who registered a tool is stamped when it registers: the plugin layer runs
each plugin's `dsh_agent_published` inside `registering_as(label)` (a
context variable, so tools a task started there registers later count too).

Durable tools confirm the Session's log with `flush_barrier(store, session)`
before they read it and after they append: it raises `BarrierFailed`
(`persistence_uncertain` when the flush raised and an eager write may or may
not have committed, `persistence_unavailable` when nothing durable
acknowledged the Session), a `ToolError` the model can act on.
"""

from __future__ import annotations

import functools
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from ..base.clock import Clock
from ..base.deprecation import deprecated
from ..base.errors import LimitExceeded
from ..base.jsonbytes import encode, parse_object
from ..base.jsontypes import JsonLike, to_json
from ..base.limits import (
    MAX_ARGUMENTS_BYTES,
    MAX_DEPTH,
    MAX_RESULT_BYTES,
    MAX_TOOL_CALLS,
    check_text,
)
from ..base.scope import Disposer
from ..base.validation import describe
from ..models.base import ToolCall
from ..session.events import ErrorInfo, ToolResult
from .errors import BarrierFailed, DuplicateTool, ToolError

if TYPE_CHECKING:
    from ..session.live import LiveSessions
    from ..session.log import Session
    from .agent import Agent

__all__ = [
    "Tool",
    "ToolArguments",
    "ToolContext",
    "ToolOutcome",
    "ToolRegistry",
    "flush_barrier",
    "invoke_tool",
    "registering_as",
]

log = logging.getLogger(__name__)

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z][a-zA-Z0-9_-]{0,63}$")
_MAX_MESSAGE = 4_096

# Who is registering tools right now (e.g. "plugin 'tool-clock' (dsh-tool-clock
# 0.1)"), for the log line of a tool that fails. A context variable, not Host
# state: it follows the hook call into the tasks it starts, and nothing else.
_registering: ContextVar[str | None] = ContextVar("dsh_tool_origin", default=None)


@contextmanager
def registering_as(origin: str) -> Iterator[None]:
    """Tools registered inside this block (and tasks started in it) are `origin`'s."""
    token = _registering.set(origin)
    try:
        yield
    finally:
        _registering.reset(token)


class ToolArguments(BaseModel):
    """Base for tool input models: strict, no extra fields, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


async def flush_barrier(live: LiveSessions, session: Session) -> None:
    """Await `store.flush(session)`; raise `BarrierFailed` unless storage acknowledged it.

    A flush that raised is `persistence_uncertain` (never guess whether an
    eager write committed); one that returned False is
    `persistence_unavailable` (nothing durable is attached to the Session).
    """
    try:
        durable = await live.flush(session)
    except Exception as error:
        raise BarrierFailed("persistence_uncertain", f"{type(error).__name__}: {error}") from error
    if not durable:
        raise BarrierFailed(
            "persistence_unavailable", "no durable storage acknowledged this Session"
        )


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a running tool may use.

    `clock` is the Host's (`wall_ms()` for epoch milliseconds, fake in tests).
    `time_zone` is the IANA zone the person's browser sent with the message
    that started this turn (`"Europe/Paris"`), or None when that message
    named none (a reminder's follow-up, a CLI message): a tool defaulting to
    "the person's zone" falls back to its own choice then, and says so.
    """

    agent: Agent
    session: Session
    live: LiveSessions
    clock: Clock
    time_zone: str | None = None

    @property
    def store(self) -> LiveSessions:
        """The second edition's name of `live` (deprecated)."""
        deprecated("ToolContext.store", "ToolContext.live")
        return self.live


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A finished call: exactly one of `value` and `error` is meaningful."""

    call_id: str
    name: str
    value: JsonValue = None
    error: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_event_data(self) -> dict[str, JsonValue]:
        """The `tool/result` event data (public shape, built by `dsh.session.events.ToolResult`)."""
        if self.error is not None:
            error = ErrorInfo.model_validate(self.error)
            return ToolResult(callId=self.call_id, name=self.name, error=error).data()
        return ToolResult(callId=self.call_id, name=self.name, value=self.value).data()


ArgsT = TypeVar("ArgsT", bound=BaseModel)


class Tool(ABC, Generic[ArgsT]):
    """A callable capability. Subclasses set `name`, `description`, `arguments`.

    `Tool` itself has no instance dict (`__slots__ = ()`), so a subclass that
    declares its own `__slots__` is slotted too: worth it for tools installed
    in every Session. A subclass without `__slots__` works as usual.
    """

    __slots__ = ()

    name: ClassVar[str]
    description: ClassVar[str]
    arguments: ClassVar[type[BaseModel]]

    @abstractmethod
    async def run(self, args: ArgsT, ctx: ToolContext) -> JsonLike:
        """Do the work and return a JSON value; raise `ToolError` for a model-facing error."""

    def schema(self) -> dict[str, Any]:
        """The function schema model adapters send (OpenAI `tools[]` shape).

        The two outer dicts are fresh on every call. `parameters` is one
        object per arguments model, shared by every call and every Host:
        read or serialise it, never change it.
        """
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": _parameters(self.arguments),
            },
        }


@functools.lru_cache(maxsize=256)
def _parameters(arguments: type[BaseModel]) -> dict[str, Any]:
    # Generating a JSON schema costs about 1.6 ms per model, and every model step
    # sends every tool's schema: a burst of reminder turns spent most of its time
    # here, and then in copying the result. The schema is a pure function of the
    # (immutable) model class, the same for every Host, so this memo shares no
    # Host's state; `Tool.schema` says it is read-only.
    parameters = arguments.model_json_schema()
    parameters.pop("title", None)
    return parameters


class _Unregister:
    """The disposer `ToolRegistry.register` returns: a slotted object, not a
    closure, because every live agent keeps one per tool (≈ 150 bytes less)."""

    __slots__ = ("_tool", "_tools")

    def __init__(self, tools: dict[str, Tool[Any]], tool: Tool[Any]) -> None:
        self._tools = tools
        self._tool = tool

    def __call__(self) -> None:
        tool = self._tool
        if self._tools.get(tool.name) is tool:
            del self._tools[tool.name]


class ToolRegistry:
    """The tools of one agent, in registration order."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool[Any]] = {}
        self._origins: dict[str, str] = {}

    def register(self, tool: Tool[Any]) -> Disposer:
        """Add `tool`; returns the disposer that removes exactly this registration.

        Raises `DuplicateTool` naming the tool if the name is taken, and
        `TypeError` if `tool` is not a `Tool` with a valid name and arguments
        that give a JSON schema.
        """
        if not isinstance(tool, Tool):
            raise TypeError(f"expected a dsh.Tool, got {type(tool).__name__}")
        if not TOOL_NAME_PATTERN.fullmatch(getattr(tool, "name", "") or ""):
            raise TypeError(f"tool {tool!r} has an invalid name {getattr(tool, 'name', None)!r}")
        if tool.name in self._tools:
            raise DuplicateTool(
                f"a tool named {tool.name!r} is already registered "
                f"({type(self._tools[tool.name]).__qualname__})",
                tool.name,
            )
        try:  # built now rather than in the first turn's model step (≈ 1.6 ms per model)
            _parameters(tool.arguments)
        except Exception as error:
            raise TypeError(
                f"tool {tool.name!r}: its arguments give no JSON schema ({error})"
            ) from error
        self._tools[tool.name] = tool
        origin = _registering.get()
        if origin is None:
            self._origins.pop(tool.name, None)
        else:
            self._origins[tool.name] = origin
        return _Unregister(self._tools, tool)

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def origin(self, name: str) -> str | None:
        """Who registered tool `name` (see `registering_as`), if anyone said so."""
        return self._origins.get(name) if name in self._tools else None

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self._tools.values()]

    def __iter__(self) -> Iterator[Tool[Any]]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def _parse_arguments(raw: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            check_text(raw, "arguments", MAX_ARGUMENTS_BYTES)
        except LimitExceeded as error:
            raise ToolError("invalid_arguments", str(error)) from None
        try:
            raw = parse_object(raw) if raw.strip() else {}
        except ValueError as error:
            raise ToolError("invalid_arguments", f"arguments are not valid JSON: {error}") from None
    if not isinstance(raw, dict):
        raise ToolError("invalid_arguments", "arguments must be a JSON object")
    return raw


def checked_arguments(raw: str | dict[str, Any]) -> bytes:
    """The canonical JSON of a call's arguments, within the limits; `ToolError` if not.

    The one check for arguments, shared by the pipeline and by the agent
    when it decides how to store a call.
    """
    parsed = _parse_arguments(raw)
    try:
        return encode(parsed, max_depth=MAX_DEPTH, max_bytes=MAX_ARGUMENTS_BYTES, what="arguments")
    except ValueError as error:
        raise ToolError("invalid_arguments", str(error)) from None


def _validate_arguments(tool: Tool[Any], raw: str | dict[str, Any]) -> BaseModel:
    """Parse and validate in JSON mode: arguments arrive as JSON, so strict fields
    such as enums and dates must accept their JSON spellings."""
    text = checked_arguments(raw)
    try:
        return tool.arguments.model_validate_json(text)
    except ValidationError as error:
        raise ToolError("invalid_arguments", describe(error, root="arguments")) from None


def too_many_calls(call: ToolCall, position: int, total: int) -> ToolOutcome:
    """The outcome of a call past `MAX_TOOL_CALLS` in one reply: not run."""
    return ToolOutcome(
        call.id,
        call.name,
        error={
            "code": "too_many_calls",
            "message": (
                f"a reply may request at most {MAX_TOOL_CALLS} tool calls; call "
                f"{position + 1} of {total} was not run"
            ),
        },
    )


def _short(message: str) -> str:
    # An error message is for people and models: a few lines, never a megabyte.
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


async def invoke_tool(registry: ToolRegistry, call: ToolCall, ctx: ToolContext) -> ToolOutcome:
    """Run one call through the pipeline; never raises except on cancellation."""
    tool = registry.get(call.name)
    try:
        if tool is None:
            known = ", ".join(registry.names()) or "none"
            raise ToolError("unknown_tool", f"no tool named {call.name!r} (available: {known})")
        args = _validate_arguments(tool, call.arguments)
        result = await tool.run(args, ctx)
        try:
            value = to_json(result, "result")
            encode(value, max_depth=MAX_DEPTH, max_bytes=MAX_RESULT_BYTES, what="result")
        except ValueError as error:
            raise ToolError(
                "invalid_result", f"tool {call.name!r} returned a value that is not JSON: {error}"
            ) from None
    except ToolError as error:
        return ToolOutcome(
            call.id, call.name, error={"code": error.code, "message": _short(error.message)}
        )
    except Exception:
        log.exception(
            "tool %r of %s failed in session %s",
            call.name,
            registry.origin(call.name) or "no named plugin",
            ctx.session.id,
        )
        return ToolOutcome(
            call.id,
            call.name,
            error={
                "code": "internal_error",
                "message": f"the tool {call.name!r} failed unexpectedly; the host's log "
                "has the details, not this conversation",
            },
        )
    return ToolOutcome(call.id, call.name, value=value)
