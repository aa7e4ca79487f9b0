"""The error shapes every layer uses, the foundation's own errors, and the one error collector.

Each layer keeps its errors in one module (`dsh.<layer>.errors`), each
docstring drawing that layer's hierarchy. This one draws the roots:

    Exception
    ├── DshError            a failure of the host; `code`/`status` say what a client is told
    │   ├── (every layer's errors: StorageError, SessionNotFound, HostClosed, AgentClosed, …)
    │   └── Unretryable     a failure the same work meets again (mixed into a layer's error)
    ├── CodedError          a failure that crosses a boundary as `{"code", "message"}`
    │   (ToolError, ActionError, ModelError, ApiError — each instance has its own code)
    ├── LimitExceeded(ValueError)   a value deeper or larger than its limit
    ├── NotJson(ValueError)         a value that is not plain, finite JSON
    ├── ScopeClosed(RuntimeError)   registering into a closing or closed Scope
    └── TaskSetClosed(RuntimeError) starting a task in a closed TaskSet

**What a client is told** (`refusal_of`): a `CodedError` is its own answer.
A `DshError` whose class declares a `code` answers with that code, its
class's HTTP `status` and `refusal_message()` (its own words, unless the
class adds advice); a subclass inherits both and may override them, so the
answer depends on the class alone, never on the order of a chain of
`isinstance` tests. An `OSError` is storage failing (503
`storage_unavailable`). Anything else is unexpected: None, and the caller
answers a logged 500 without the error's words.

`raise_errors(errors, summary)` is the one way to finish work that kept going
after failures (closing every Session, unloading every plugin, running every
disposer): nothing for no failure, the failure itself for one, an
`ExceptionGroup` for several.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import JsonValue

__all__ = [
    "CodedError",
    "DshError",
    "LimitExceeded",
    "NotJson",
    "ScopeClosed",
    "TaskSetClosed",
    "Unretryable",
    "raise_errors",
    "refusal_of",
]


class DshError(Exception):
    """A failure of the host. `code` (None: not meant for clients) and `status` are the
    class's answer to a client that asked for the failed work (`refusal_of`)."""

    code: ClassVar[str | None] = None
    status: ClassVar[int] = 500

    def refusal_message(self) -> str:
        """What a client is told; the error's own words unless the class adds advice."""
        return str(self)


class Unretryable(DshError):
    """A failure the same work meets again, however often it is retried: a layer's
    error mixes it in (`StorageRefused`) so that a layer below it can tell, without
    importing it, that waiting and retrying cannot help (`dsh.session.errors.FlushRefused`)."""


class CodedError(Exception):
    """A failure with a `code`, a `message` and an HTTP `status` hint.

    `CodedError` is what a failure looks like wherever it leaves the host's
    inside: to a model (`ToolError`), from a model (`ModelError`), to an HTTP
    client (`ApiError`), from a plugin's action (`ActionError`). `to_dict()`
    is the `{"code", "message"}` shape every boundary uses. `status` defaults
    to the class's `default_status`; pass `status=` when one failure of a kind
    means something else (a conflict is 409).
    """

    default_status: ClassVar[int] = 500

    def __init__(self, code: str, message: str, *, status: int | None = None) -> None:
        if not isinstance(code, str) or not code:
            raise TypeError(f"an error code is a non-empty string, not {code!r}")
        if not isinstance(message, str):
            raise TypeError(f"an error message is a string, not {type(message).__name__}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status: int = self.default_status if status is None else status

    def to_dict(self) -> dict[str, JsonValue]:
        """`{"code", "message"}`."""
        return {"code": self.code, "message": self.message}


class LimitExceeded(ValueError):
    """A value is deeper or larger than its limit; the message names what, and the limit."""


class NotJson(ValueError):
    """A value that is not plain, finite JSON; the message names the first place."""


class ScopeClosed(RuntimeError):
    """Raised when registering into a Scope that is closing or closed."""


class TaskSetClosed(RuntimeError):
    """Raised when starting a task in a TaskSet that is closed."""


def refusal_of(error: BaseException) -> CodedError | None:
    """The code, message and status `error` stands for, or None for an unexpected one.

    The web API answers with it (`dsh.web.errors`), and so does a host that
    ran an action for another one (`dsh.relay.actions`): a refusal relayed
    from the owner reads exactly like a local one.
    """
    if isinstance(error, CodedError):
        return error
    if isinstance(error, DshError):
        kind = type(error)
        if kind.code is None:
            return None
        return CodedError(kind.code, error.refusal_message(), status=kind.status)
    if isinstance(error, OSError):
        return CodedError("storage_unavailable", f"storage failed: {error}", status=503)
    return None


def raise_errors(errors: Sequence[Exception], summary: str) -> None:
    """Raise nothing, the one error, or `ExceptionGroup(summary, errors)` for several."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ExceptionGroup(summary, list(errors))
