"""The errors of waking cold Sessions.

    StorageError (dsh.persistence.errors)
    └── WakeIndexUnavailable         the index could neither record a change nor be made unusable
    DshError (dsh.base.errors)
    ├── WakeBackendError             the wake index's storage could not read or write
    └── WakeUnavailable(ValueError)  the chosen store kind has no wake index
"""

from __future__ import annotations

from ..base.errors import DshError
from ..persistence.errors import StorageError

__all__ = ["WakeBackendError", "WakeIndexUnavailable", "WakeUnavailable"]


class WakeIndexUnavailable(StorageError):
    """The wake index could neither record a change nor be made unusable."""


class WakeBackendError(DshError):
    """The wake store could not read or write; the message names the file or table."""


class WakeUnavailable(DshError, ValueError):
    """The chosen Session store has no wake index (the message says which)."""
