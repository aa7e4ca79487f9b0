"""The errors of the Host itself.

    DshError (dsh.base.errors)
    └── HostError                    a Host operation failed; names what and which Session
        ├── HostClosed               the Host is not running: 503 host_closed
        └── PersistenceUnavailable   storage did not acknowledge a Session: 503

The Session-level refusals a Host raises live with their layer:
`SessionNotFound` (`dsh.persistence.errors`), `InvalidSessionId` and
`SessionLiveElsewhere` (`dsh.session.errors`).
"""

from __future__ import annotations

from ..base.errors import DshError

__all__ = ["HostClosed", "HostError", "PersistenceUnavailable"]


class HostError(DshError):
    """A Host operation failed; the message says what and for which Session."""


class HostClosed(HostError):
    """The Host is not running."""

    code = "host_closed"
    status = 503


class PersistenceUnavailable(HostError):
    """Storage did not acknowledge a Session's flush (a new one's first, or a title's)."""

    code = "persistence_unavailable"
    status = 503
