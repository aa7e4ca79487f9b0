"""Errors shared by every layer: the coded-error base and the one error collector.

`CodedError` is what a failure looks like wherever it leaves the host's
inside: to a model (`ToolError`), from a model (`ModelError`), to an HTTP
client (`ApiError`), from a plugin's action (`ActionError`). Each has a
machine-readable `code`, a `message` a person can act on, `to_dict()` (the
`{"code", "message"}` shape every boundary uses) and `status`, the HTTP
status the failure stands for when a web client asked for it.

`raise_errors(errors, summary)` is the one way to finish work that kept going
after failures (closing every Session, unloading every plugin, running every
disposer): nothing for no failure, the failure itself for one, an
`ExceptionGroup` for several.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import JsonValue

__all__ = ["ActionError", "CodedError", "raise_errors"]


class CodedError(Exception):
    """A failure with a `code`, a `message` and an HTTP `status` hint.

    `status` defaults to the class's `default_status`; pass `status=` when
    one failure of a kind means something else (a conflict is 409).
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


class ActionError(CodedError):
    """A person's action (`dsh_session_action`) was refused; `status` says how.

    The helpers name the usual cases: `not_found` (404: no such action),
    `invalid` (422: bad arguments) and `conflict` (409: the state changed
    under the person, e.g. a reminder that is already gone).
    """

    default_status = 400

    @classmethod
    def not_found(cls, message: str, code: str = "unknown_action") -> ActionError:
        return cls(code, message, status=404)

    @classmethod
    def invalid(cls, message: str, code: str = "invalid_arguments") -> ActionError:
        return cls(code, message, status=422)

    @classmethod
    def conflict(cls, message: str, code: str = "conflict") -> ActionError:
        return cls(code, message, status=409)


def raise_errors(errors: Sequence[Exception], summary: str) -> None:
    """Raise nothing, the one error, or `ExceptionGroup(summary, errors)` for several."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise ExceptionGroup(summary, list(errors))
