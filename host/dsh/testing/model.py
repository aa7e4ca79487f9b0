"""`FakeModel`: a model adapter for tests that answers from a script and records what it saw.

    model = FakeModel([
        FakeModel.tool_call("echo", {"text": "hi"}),  # a reply that calls a tool
        "done",                                    # a plain text reply
        lambda request: ModelReply(text=f"{len(request.messages)} messages"),
        wait_then_reply,                           # an async function: a turn that waits
    ])

Replies are used in order, one per model call (shared by every agent using
the instance). Once the script is used up, every call fails with
`ModelError("model_unavailable")` saying so, and the turn ends with an error
as it would with an unreachable model. `requests` holds every request, for
assertions about what the model was shown (messages, offered tools).
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import anyio

from ..models.base import DeltaSink, ModelReply, ModelRequest, ToolCall
from ..models.errors import ModelError

__all__ = ["FakeModel", "Reply"]

Reply = ModelReply | str | Callable[[ModelRequest], ModelReply | Awaitable[ModelReply]]
"""A scripted reply: as is, plain text, or computed (and maybe awaited) from the request."""


class FakeModel:
    """A scripted `ModelAdapter` (see the module docstring)."""

    name = "fake"

    def __init__(self, replies: Iterable[Reply] = ()) -> None:
        self._script: deque[Reply] = deque(replies)
        self.requests: list[ModelRequest] = []

    @staticmethod
    def tool_call(
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        id: str | None = None,
        text: str = "",
    ) -> ModelReply:
        """A reply (saying `text`) that calls tool `name` with `arguments`.

        `arguments` is a JSON object, or raw text sent as is (to test how a
        tool answers arguments that are not JSON); the call id defaults to
        `call-<name>`.
        """
        raw: dict[str, Any] | str = (
            arguments if isinstance(arguments, str) else dict(arguments or {})
        )
        return ModelReply(
            text=text, tool_calls=(ToolCall(id=id or f"call-{name}", name=name, arguments=raw),)
        )

    def add(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._script.extend(replies)

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._script)

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """The next scripted reply (its text is streamed as one delta)."""
        await anyio.lowlevel.checkpoint()
        self.requests.append(request)
        if not self._script:
            raise ModelError(
                "model_unavailable",
                f"the fake model's script is used up after {len(self.requests) - 1} replies",
            )
        reply = self._script.popleft()
        if isinstance(reply, str):
            reply = ModelReply(text=reply)
        elif not isinstance(reply, ModelReply):
            made = reply(request)
            reply = await made if inspect.isawaitable(made) else made
        if reply.text and on_delta is not None:
            on_delta(reply.text)
        return reply
