"""Names kept for plugins written against an earlier edition, and how they say so.

A renamed public name keeps working for at least one edition: reading it
returns what the new name returns and emits a `DeprecationWarning` naming its
replacement (`deprecated`). Each one is listed in docs/DESIGN.md ("Renamed
names") with the edition that renamed it.
"""

from __future__ import annotations

import warnings

__all__ = ["deprecated"]


def deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that `old` is a deprecated name of `new` (from the caller's caller's line)."""
    warnings.warn(
        f"{old} is deprecated since dsh's third edition; use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
