"""The errors of agents and their tools.

    DshError (dsh.base.errors)
    ├── AgentBusy(RuntimeError)      maintenance asked while the agent is not idle
    └── AgentClosed(RuntimeError)    the agent takes no more input: 409 session_closed
    CodedError (dsh.base.errors)
    └── ToolError                    a failure the model reads as {code, message}: 422
        └── BarrierFailed            the flush barrier did not confirm the Session: 503
    DuplicateTool(ValueError)        a tool name registered twice in one agent
"""

from __future__ import annotations

from typing import Literal

from ..base.errors import CodedError, DshError

__all__ = ["AgentBusy", "AgentClosed", "BarrierCode", "BarrierFailed", "DuplicateTool", "ToolError"]


class AgentBusy(DshError, RuntimeError):
    """`run_maintenance` was asked while a turn or other maintenance owns the agent."""


class AgentClosed(DshError, RuntimeError):
    """The agent is closed: it takes no more input or work."""

    code = "session_closed"
    status = 409

    def refusal_message(self) -> str:
        return f"{self}; resume the session and retry"


class ToolError(CodedError):
    """A failure the model should see as `{"code", "message"}`.

    Raised from a tool, it becomes the call's error result. Tool code reused
    by a plugin's action (`dsh_session_action`) may raise it too: the web API
    answers with `status` (422 unless the error says otherwise, e.g. 409 for
    a conflict or 503 when storage did not confirm).
    """

    default_status = 422


BarrierCode = Literal["persistence_uncertain", "persistence_unavailable"]


class BarrierFailed(ToolError):
    """The flush barrier did not confirm the Session; `code` says how, `detail` why."""

    default_status = 503

    def __init__(self, code: BarrierCode, detail: str) -> None:
        super().__init__(code, detail)
        self.code: BarrierCode = code
        self.detail = detail


class DuplicateTool(ValueError):
    """A tool with that name is already registered in this registry; `tool` is the name."""

    def __init__(self, message: str, tool: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool
