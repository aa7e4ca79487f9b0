"""The Agent: one Session's driver, its phases, its input queue and its turns.

Phases: `idle`, `turn`, `maintenance`, `closed` (DESIGN §5).

- `submit()` and `followup()` enqueue input synchronously; both raise
  `AgentClosed` once the agent is closed.
- The driver takes queued input only from `idle`: it claims `turn`, appends
  `message/user`, asks the model, runs requested tools through the pipeline,
  appends their results, repeats (at most `max_steps` model calls), appends
  `turn/end` and returns to `idle`.
- `run_maintenance(task)` claims `maintenance` only from `idle` (no turn, no
  other maintenance) or raises `AgentBusy`; `run_maintenance(task,
  wait=True)` waits for its turn instead. Input that arrives meanwhile stays
  parked and runs right after the task settles.
- `when_idle()` returns at the next transition into `idle` (always a *next*
  one, even if the agent is idle now), and also returns (without raising) when
  the agent closes, so waiters can notice `closed`.
- `await cancel_turn()` stops the running turn, if there is one: its model
  call or tool is cancelled (and awaited), the turn ends with `turn/end`
  `{"status": "error", "error": {"code": "cancelled"}}`, and queued input stays
  queued (the next message runs as usual). Maintenance is not a turn and is
  never cancelled this way.

**Maintenance is not starved by input.** At every transition into `idle`:

1. a waiting maintenance claim (`wait=True`; the oldest first) gets the
   agent before any queued input — a user who keeps typing cannot keep a
   due reminder waiting;
2. input queued *during* maintenance with `followup()` (a reminder's
   message) runs right after the task, ahead of input queued before it
   (behind follow-ups of earlier tasks still waiting to start: below);
3. then queued input runs in order.

So a reminder that falls due during a turn is delivered (dispatched and its
message taken) right after that turn, before the first message queued
behind it; one that falls due while the agent is idle is delivered at once.

**Background turns wait their turn on the host.** A turn whose message is
not a person's (`source.kind` other than `"user"`: a plugin's follow-up)
starts inside `background.turn()` (`dsh.base.background`, one per Host): it
waits while the host does urgent work (a storm's dispatches) and for one of
the host's background-turn slots. It waits still queued and with the agent
idle, so a maintenance claim takes the agent first and the message is
counted in `pending`; while the host's urgent work runs, its driver is not
even started (`Background.later`), so a storm's follow-ups cost no task each
until the dispatches are stored.

The driver is started on demand in the Agent's `TaskSet`, so an idle agent
holds no task. Closing cancels the driver and every task the agent's plugins
started there, then closes the agent's scope (unwinding installations).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, TypeVar

import anyio
from anyio.abc import TaskGroup
from pydantic import JsonValue, ValidationError

from ..base.background import Background
from ..base.clock import Clock
from ..base.deprecation import deprecated
from ..base.errors import LimitExceeded
from ..base.limits import MAX_ARGUMENTS_BYTES, MAX_TOOL_CALLS, check_text
from ..base.listeners import Listeners
from ..base.scope import Disposer, Scope
from ..base.tasks import TaskSet
from ..base.validation import describe
from ..models.base import ModelAdapter, ModelReply, ModelRequest, StreamSink, ToolCall
from ..models.errors import ModelError
from ..models.messages import conversation
from ..session.errors import PayloadError
from ..session.events import (
    AssistantMessage,
    ErrorInfo,
    Source,
    ToolCallRecord,
    TurnEnd,
    UserMessage,
)
from ..session.live import LiveSessions
from ..session.log import Session
from ..session.types import ASSISTANT_MESSAGE, TOOL_RESULT, TURN_END, USER_MESSAGE
from .errors import AgentBusy, AgentClosed, ToolError
from .tools import ToolContext, ToolRegistry, checked_arguments, invoke_tool, too_many_calls

__all__ = ["DEFAULT_MAX_STEPS", "Agent", "AgentBusy", "AgentClosed", "AgentPhase"]

log = logging.getLogger(__name__)

DEFAULT_MAX_STEPS = 8
# What is kept of arguments too long to store: enough to see what the model began.
_KEPT_ARGUMENTS_CHARS = 1_024
T = TypeVar("T")
DeltaListener = Callable[[str], None]
DeltaChannel = Literal["answer", "reasoning"]


class AgentPhase(StrEnum):
    IDLE = "idle"
    TURN = "turn"
    MAINTENANCE = "maintenance"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class _Input:
    text: str
    source: dict[str, JsonValue]
    time_zone: str | None = None


def _background(item: _Input) -> bool:
    """A plugin's follow-up, not a person's message: its turn is background work."""
    return item.source.get("kind") != "user"


class Agent:
    """Drives one live Session."""

    def __init__(
        self,
        *,
        session: Session,
        live: LiveSessions,
        model: ModelAdapter,
        group: TaskGroup,
        clock: Clock | None = None,
        parent: Agent | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        background: Background | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if parent is not None and session.header.depth <= parent.depth:
            raise ValueError(
                f"a child agent's Session is deeper than its parent's: session {session.id} "
                f"has delegationDepth {session.header.depth}, its parent {parent.depth}"
            )
        self.session = session
        self.live = live
        self.model = model
        self.clock: Clock = clock or live.clock
        self.parent = parent
        self.max_steps = max_steps
        # The host's, shared by every agent; an agent made alone gets its own.
        self.background = background or Background()
        self.tools = ToolRegistry()
        name = f"agent {session.id}"
        self.scope = Scope(name)
        self.tasks = TaskSet(group, name=name)
        self._phase = AgentPhase.IDLE
        # Lists, not deques: an empty deque costs 600 bytes and these stay short.
        self._inbox: list[_Input] = []
        self._claims: list[anyio.Event] = []
        self._maintenance_input: list[_Input] = []
        # Made when someone waits: an idle agent nobody waits on holds no event.
        self._idle: anyio.Event | None = None
        self._driving = False
        self._held_back = False  # the driver's start waits in `background.later`
        self._turn_scope: anyio.CancelScope | None = None
        self._turn_done: anyio.Event | None = None
        self._delta_listeners: dict[DeltaChannel, Listeners[DeltaListener]] = {}

    # -- state ------------------------------------------------------------

    @property
    def store(self) -> LiveSessions:
        """The second edition's name of `live` (deprecated)."""
        deprecated("Agent.store", "Agent.live")
        return self.live

    @property
    def phase(self) -> AgentPhase:
        return self._phase

    @property
    def depth(self) -> int:
        """The Session's durable `delegationDepth` (0 for a root)."""
        return self.session.header.depth

    @property
    def is_root(self) -> bool:
        """True unless the Session is a delegated one (`delegationDepth` ≥ 1 in its header).

        The header is durable, so this is the same on every path that makes
        the Session live: new, resumed, forked (a fork keeps its parent's
        depth) or spawned as a child.
        """
        return self.depth == 0

    @property
    def closed(self) -> bool:
        return self._phase is AgentPhase.CLOSED

    @property
    def pending(self) -> int:
        """How many inputs are queued and not yet taken by the driver."""
        return len(self._inbox)

    def __repr__(self) -> str:
        return f"<Agent {self.session.id} {self._phase}>"

    # -- input ------------------------------------------------------------

    def submit(
        self,
        text: str,
        source: dict[str, JsonValue] | None = None,
        *,
        time_zone: str | None = None,
    ) -> None:
        """Queue a user message, with the IANA zone it was written in when known.

        Raises `AgentClosed` after close.
        """
        self._enqueue(_Input(text, dict(source or {"kind": "user"}), time_zone))

    def followup(self, text: str, source: dict[str, JsonValue]) -> None:
        """Queue a message on behalf of a plugin, synchronously and in order.

        `source["kind"]` names the plugin (e.g. `"schedule"`). Queued during
        maintenance, it runs right after the maintenance task, ahead of input
        queued earlier. Raises `AgentClosed` after close.
        """
        if not isinstance(source, dict) or not isinstance(source.get("kind"), str):
            raise TypeError("followup source must be a dict with a string 'kind'")
        self._enqueue(_Input(text, dict(source)), follows_maintenance=True)

    def _enqueue(self, item: _Input, *, follows_maintenance: bool = False) -> None:
        if self._phase is AgentPhase.CLOSED:
            raise AgentClosed(f"agent for session {self.session.id} is closed")
        if not isinstance(item.text, str):
            raise TypeError("message text must be a string")
        if follows_maintenance and self._phase is AgentPhase.MAINTENANCE:
            self._maintenance_input.append(item)
        else:
            self._inbox.append(item)
        self._kick()

    def _kick(self) -> None:
        if self._phase is not AgentPhase.IDLE or not self._inbox:
            return
        if self._driving or self._held_back:
            return
        # A follow-up first in line while the host does urgent work: its driver is not
        # even started until that work lets it go (`Background.later`).
        if _background(self._inbox[0]) and self.background.later(self._let_go):
            self._held_back = True
            return
        self._start_driver(waited=False)

    def _let_go(self) -> None:
        """`background.later` let the held-back driver start."""
        self._held_back = False
        if self._phase is AgentPhase.IDLE and self._inbox and not self._driving:
            self._start_driver(waited=True)

    def _start_driver(self, *, waited: bool) -> None:
        self._driving = True
        self.tasks.start_soon(self._drive, waited, name=f"turns {self.session.id}")

    # -- phases -----------------------------------------------------------

    def _enter_idle(self) -> None:
        """Go idle, wake idle waiters, and hand the agent to a waiting maintenance claim."""
        self._phase = AgentPhase.IDLE
        self._wake_idle_waiters()
        if self._claims:
            self._phase = AgentPhase.MAINTENANCE
            self._claims.pop(0).set()

    def _wake_idle_waiters(self) -> None:
        event, self._idle = self._idle, None
        if event is not None:
            event.set()

    async def when_idle(self) -> None:
        """Return at the next transition into idle (the end of a turn or of maintenance).

        It always waits for a *next* transition, even when the agent is idle
        now: callers use it to retry after a refusal without spinning, and an
        idle agent has nothing to retry against until something happens. Also
        returns when the agent closes (at once if it is closed); check `closed`
        afterwards.
        """
        if self._phase is AgentPhase.CLOSED:
            return
        if self._idle is None:
            self._idle = anyio.Event()
        await self._idle.wait()

    async def run_maintenance(self, task: Callable[[], Awaitable[T]], *, wait: bool = False) -> T:
        """Run `task` while holding the `maintenance` phase.

        Unless the agent is idle, raises `AgentBusy` — or, with `wait=True`,
        waits until the agent is handed to it at a transition into idle
        (claims are served oldest first, before any queued input). Raises
        `AgentClosed` if the agent is or becomes closed. Input queued while
        the task runs stays parked until the task settles; its own
        `followup`s then run first, then the input queued before, in order.
        """
        if self._phase is AgentPhase.CLOSED:
            raise AgentClosed(f"agent for session {self.session.id} is closed")
        if self._phase is AgentPhase.IDLE:
            self._phase = AgentPhase.MAINTENANCE
        elif wait:
            await self._claim()
        else:
            raise AgentBusy(f"agent for session {self.session.id} is in {self._phase.value}")
        try:
            return await task()
        finally:
            self._end_maintenance()

    async def _claim(self) -> None:
        """Wait until `_enter_idle` hands the agent over (the phase is then `maintenance`)."""
        claim = anyio.Event()
        self._claims.append(claim)
        try:
            await claim.wait()
        except BaseException:
            if claim.is_set():
                self._end_maintenance()  # handed over, but the claimant left: pass it on
            else:
                self._claims.remove(claim)
            raise
        if self._phase is AgentPhase.CLOSED:
            raise AgentClosed(f"agent for session {self.session.id} closed while waiting")

    def _end_maintenance(self) -> None:
        if self._phase is not AgentPhase.MAINTENANCE:
            return
        parked, self._maintenance_input = self._maintenance_input, []
        # Ahead of queued input, behind the follow-ups still waiting for a background
        # slot (queued by an earlier maintenance): follow-ups keep their order.
        waiting = 0
        while waiting < len(self._inbox) and _background(self._inbox[waiting]):
            waiting += 1
        self._inbox[waiting:waiting] = parked
        self._enter_idle()
        self._kick()

    # -- the turn driver --------------------------------------------------

    async def _drive(self, waited: bool) -> None:
        """Take queued turns in order; `waited`: the first one's start was held back already."""
        try:
            while self._phase is AgentPhase.IDLE and self._inbox:
                if not _background(self._inbox[0]):
                    await self._take_turn()
                else:
                    # A plugin's follow-up waits for the host's urgent work and a
                    # background slot, still queued (so `pending` counts it) and
                    # idle (so a due reminder's maintenance may go first).
                    async with self.background.turn(waited=waited):
                        if self._phase is not AgentPhase.IDLE or not self._inbox:
                            break  # claimed meanwhile: its end starts the driver again
                        await self._take_turn()
                waited = False
                # Let woken idle waiters (e.g. a due reminder) run before the next turn.
                await anyio.lowlevel.checkpoint()
        finally:
            self._driving = False

    async def _take_turn(self) -> None:
        item = self._inbox.pop(0)
        self._phase = AgentPhase.TURN
        try:
            await self._turn(item)
        finally:
            if self._phase is AgentPhase.TURN:
                self._enter_idle()

    async def _turn(self, item: _Input) -> None:
        message = UserMessage(
            text=item.text, source=Source.model_validate(item.source), timeZone=item.time_zone
        )
        done = self._turn_done = anyio.Event()
        try:
            self.live.append(self.session, USER_MESSAGE, message.data())
            await self._run_turn(message.time_zone)
        finally:
            self._turn_done = None
            done.set()

    async def _run_turn(self, time_zone: str | None) -> None:
        status: dict[str, JsonValue] | None = {
            "code": "cancelled",
            "message": "the turn was stopped before it finished",
        }
        try:
            # Its own scope, so that `cancel_turn` stops this turn and nothing else;
            # when it does, the scope swallows the cancellation and `status` stays.
            with anyio.CancelScope() as self._turn_scope:
                status = await self._steps(time_zone)
        except anyio.get_cancelled_exc_class():
            self._end_turn({"code": "cancelled", "message": "the agent closed during this turn"})
            raise
        except Exception as error:
            # A started turn always ends in the log, whatever broke inside it
            # (e.g. a reply whose tool arguments are not JSON and cannot be stored).
            log.exception("turn failed in session %s", self.session.id)
            status = {"code": "internal_error", "message": f"{type(error).__name__}: {error}"}
        finally:
            self._turn_scope = None
        self._end_turn(status)

    async def cancel_turn(self) -> bool:
        """Stop the running turn; True if one was running (False when idle, in
        maintenance or closed).

        Returns once the turn has ended: its work was cancelled and awaited and
        its `turn/end` (code `cancelled`) appended. Queued input stays queued.
        """
        scope, done = self._turn_scope, self._turn_done
        if self._phase is not AgentPhase.TURN or scope is None or done is None:
            return False
        scope.cancel("the person stopped this turn")
        await done.wait()
        return True

    async def _steps(self, time_zone: str | None) -> dict[str, JsonValue] | None:
        """Run model steps; returns None on success or the turn's error.

        `time_zone` is the zone the message that started the turn names (`ToolContext`).
        """
        ctx = ToolContext(
            agent=self, session=self.session, live=self.live, clock=self.clock, time_zone=time_zone
        )
        for _ in range(self.max_steps):
            try:
                messages = conversation(self.session.events)
            except PayloadError as error:
                return {
                    "code": "session_log_invalid",
                    "message": f"this Session's log cannot be read back to the model: {error}",
                }
            request = ModelRequest(
                messages=messages, tools=self.tools.schemas(), session_id=self.session.id
            )
            try:
                reply = await self.model.complete(
                    request, on_delta=StreamSink(self._emit_delta, self._emit_reasoning)
                )
            except ModelError as error:
                return error.to_dict()
            except Exception as error:
                log.exception("model %r failed in session %s", self.model, self.session.id)
                return {"code": "model_failed", "message": f"{type(error).__name__}: {error}"}
            problem = _reply_problem(reply)
            if problem is not None:
                return problem
            answer = AssistantMessage(
                text=reply.text,
                toolCalls=tuple(
                    _call_record(call, runs=position < MAX_TOOL_CALLS)
                    for position, call in enumerate(reply.tool_calls)
                ),
                reasoning=reply.reasoning or None,
            )
            try:
                self.live.append(self.session, ASSISTANT_MESSAGE, answer.data())
            except ValidationError as error:
                return {
                    "code": "reply_too_large",
                    "message": f"the model's reply cannot be stored: {describe(error)}",
                }
            if not reply.tool_calls:
                return None
            total = len(reply.tool_calls)
            for position, call in enumerate(reply.tool_calls):
                if position < MAX_TOOL_CALLS:
                    outcome = await invoke_tool(self.tools, call, ctx)
                else:
                    outcome = too_many_calls(call, position, total)
                self.live.append(self.session, TOOL_RESULT, outcome.to_event_data())
        return {
            "code": "max_steps",
            "message": f"the model kept calling tools for {self.max_steps} steps; turn stopped",
        }

    def _end_turn(self, error: dict[str, JsonValue] | None) -> None:
        if not self.live.is_live(self.session):
            return
        end = (
            TurnEnd(status="ok")
            if error is None
            else TurnEnd(status="error", error=ErrorInfo.model_validate(error))
        )
        self.live.append(self.session, TURN_END, end.data())

    # -- streaming --------------------------------------------------------

    def add_delta_listener(
        self, listener: DeltaListener, *, channel: DeltaChannel = "answer"
    ) -> Disposer:
        """Receive streamed fragments of one channel (ephemeral; the stored reply supersedes them).

        `"answer"` is the assistant's text, `"reasoning"` what the model
        thought before answering; the two never mix.
        """
        listeners = self._delta_listeners.get(channel)
        if listeners is None:
            listeners = self._delta_listeners[channel] = Listeners()
        return listeners.add(listener)

    def _emit_delta(self, text: str) -> None:
        self._emit("answer", text)

    def _emit_reasoning(self, text: str) -> None:
        self._emit("reasoning", text)

    def _emit(self, channel: DeltaChannel, text: str) -> None:
        for listener in self._delta_listeners.get(channel, ()):
            try:
                listener(text)
            except Exception:
                log.exception("%s delta listener %r failed", channel, listener)

    # -- closing ----------------------------------------------------------

    async def aclose(self) -> None:
        """Close: refuse new input, cancel running work and await it, close the scope.

        Parked input that never became a `message/user` is dropped (it was only
        queued). Idempotent.
        """
        if self._phase is AgentPhase.CLOSED:
            return
        self._phase = AgentPhase.CLOSED
        self._inbox.clear()
        self._maintenance_input.clear()
        self._wake_idle_waiters()
        while self._claims:
            self._claims.pop(0).set()
        try:
            await self.tasks.aclose()
        finally:
            await self.scope.aclose()


def _reply_problem(reply: ModelReply) -> dict[str, JsonValue] | None:
    """The turn's error if the reply's text or reasoning is longer than a message may be."""
    for what, text in (("text", reply.text), ("reasoning", reply.reasoning or "")):
        try:
            check_text(text, f"the reply's {what}")
        except LimitExceeded as error:
            return {"code": "reply_too_large", "message": f"{error}; the reply was not stored"}
    return None


def _call_record(call: ToolCall, *, runs: bool = True) -> ToolCallRecord:
    """The stored form of a call.

    Arguments that pass the pipeline's checks (`checked_arguments`: a JSON
    object, finite, within `dsh.limits`) are stored as that object;
    otherwise as the raw text the model sent (so what it said is kept, and
    its `invalid_arguments` result can be read against it), cut to a prefix
    when it is longer than arguments may be. A call that will not run (past
    `MAX_TOOL_CALLS`) is stored without its arguments.
    """
    if not runs:
        return ToolCallRecord(id=call.id, name=call.name, arguments="")
    try:
        parsed = json.loads(checked_arguments(call.arguments))
    except ToolError:
        return ToolCallRecord(id=call.id, name=call.name, arguments=_raw_text(call.arguments))
    return ToolCallRecord(id=call.id, name=call.name, arguments=parsed)


def _raw_text(arguments: str | dict[str, Any]) -> str:
    if not isinstance(arguments, str):
        try:
            arguments = json.dumps(arguments, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return "(arguments that cannot be written as JSON text)"
    if len(arguments) > _KEPT_ARGUMENTS_CHARS and len(arguments.encode()) > MAX_ARGUMENTS_BYTES:
        return arguments[:_KEPT_ARGUMENTS_CHARS] + "…"
    return arguments
