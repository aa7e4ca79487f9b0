"""The errors of the Session layer.

    DshError (dsh.base.errors)
    ├── InvalidSessionId(ValueError)  an id that could not name a file: 404 invalid_session_id
    ├── SessionLiveElsewhere          another host holds the Session: 409 session_live_elsewhere
    ├── SessionClosed(RuntimeError)   appending to a Session that is not live here
    ├── FlushError                    a listener failed to flush: 503 persistence_failed
    │   └── FlushRefused              storage refused an event for good: 500 storage_refused
    └── PayloadError(ValueError)      a stored host event whose data has the wrong shape

"No such Session" is `dsh.persistence.errors.SessionNotFound`, one class
whether storage or a Host found nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.errors import DshError

if TYPE_CHECKING:
    from .log import Session

__all__ = [
    "FlushError",
    "FlushRefused",
    "InvalidSessionId",
    "PayloadError",
    "SessionClosed",
    "SessionLiveElsewhere",
]


class InvalidSessionId(DshError, ValueError):
    """A Session id that does not match `dsh.session.log.SESSION_ID_PATTERN`."""

    code = "invalid_session_id"
    status = 404

    def __init__(self, value: object) -> None:
        super().__init__(
            f"invalid session id {value!r}: expected 1-64 characters of letters, digits, "
            "'_' or '-', starting with a letter or digit"
        )
        self.value = value


class SessionLiveElsewhere(DshError):
    """Another host owns the Session (holds its lease), so this one cannot make it live.

    `owner` names that host; the message says which Session and since when.
    """

    code = "session_live_elsewhere"
    status = 409

    def __init__(self, message: str, owner: str) -> None:
        super().__init__(message)
        self.owner = owner


class SessionClosed(DshError, RuntimeError):
    """The Session is not live here (closed, or never opened)."""


class FlushError(DshError):
    """At least one listener failed to flush. `errors` holds every failure."""

    code = "persistence_failed"
    status = 503

    def __init__(self, session: Session, errors: list[Exception]) -> None:
        first = errors[0]
        super().__init__(
            f"flush of session {session.id} failed in {len(errors)} listener(s): "
            f"{type(first).__name__}: {first}"
        )
        self.session = session
        self.errors = errors


class FlushRefused(FlushError):
    """A flush failed because storage refused an event it can never hold (a listener's
    error is `Unretryable`): asking again cannot help, unlike any other `FlushError`."""

    code = "storage_refused"
    status = 500


class PayloadError(DshError, ValueError):
    """A stored host event whose data does not have its type's shape."""

    def __init__(self, seq: int, type: str, reason: str) -> None:
        super().__init__(f"event {seq} ({type}): {reason}")
        self.seq = seq
        self.type = type
        self.reason = reason
