"""The errors of relaying work to the host that owns a Session.

    DshError (dsh.base.errors)
    └── Unclaimed       no host took an action's request and none holds its Session
"""

from __future__ import annotations

from ..base.errors import DshError

__all__ = ["Unclaimed"]


class Unclaimed(DshError):
    """No host took the request and no host holds its Session: run it here."""
