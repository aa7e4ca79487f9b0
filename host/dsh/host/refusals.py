"""What a Host's or storage's failure means to whoever asked: one code, one status.

`refusal_of(error)` is the one table from the exceptions a Host operation
raises (a plugin's `CodedError`, `SessionNotFound`, `HostClosed`, a storage
failure, …) to the `{"code", "message"}` and HTTP status a client gets. The
web API answers with it (`dsh.web.errors`), and so does a host that ran an
action for another one (`dsh.relay.actions`): a refusal relayed from the
owner reads exactly like a local one.
"""

from __future__ import annotations

from ..agents.agent import AgentClosed
from ..base.errors import CodedError
from ..persistence.backend import CorruptLog, StorageError
from ..session.live import FlushError
from ..session.log import InvalidSessionId
from .host import HostClosed, PersistenceUnavailable, SessionNotFound

__all__ = ["refusal_of"]


def refusal_of(error: Exception) -> CodedError | None:
    """The code, message and status `error` stands for, or None for an unexpected one."""
    if isinstance(error, InvalidSessionId):
        return CodedError("invalid_session_id", str(error), status=404)
    if isinstance(error, SessionNotFound):
        return CodedError("session_not_found", str(error), status=404)
    if isinstance(error, HostClosed):
        return CodedError("host_closed", str(error), status=503)
    if isinstance(error, PersistenceUnavailable):
        return CodedError("persistence_unavailable", str(error), status=503)
    if isinstance(error, FlushError):
        return CodedError("persistence_failed", str(error), status=503)
    if isinstance(error, AgentClosed):
        return CodedError("session_closed", f"{error}; resume the session and retry", status=409)
    if isinstance(error, CodedError):
        return error  # a plugin's refusal (an action's `ActionError`, a tool's `ToolError`)
    if isinstance(error, CorruptLog):
        return CodedError("storage_corrupt", str(error), status=500)
    if isinstance(error, StorageError | OSError):
        return CodedError("storage_unavailable", f"storage failed: {error}", status=503)
    return None
