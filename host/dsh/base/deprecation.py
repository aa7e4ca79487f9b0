"""Names kept for plugins written against an earlier edition, and how they say so.

A renamed public name keeps working for at least one edition: reading it
returns what the new name returns and emits a `DeprecationWarning` naming its
replacement (`deprecated`). Each one is listed in docs/DESIGN.md ("Renamed
names") with the edition that renamed it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping

__all__ = ["deprecated", "renamed_module_names"]


def deprecated(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that `old` is a deprecated name of `new` (from the caller's caller's line)."""
    warnings.warn(
        f"{old} is deprecated since dsh's third edition; use {new}",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_module_names(
    module: str, renamed: Mapping[str, tuple[str, object]]
) -> Callable[[str], object]:
    """A module's `__getattr__` that serves each old name of `renamed` (old → (new name,
    value)) with a `DeprecationWarning`, and raises `AttributeError` for anything else."""

    def __getattr__(name: str) -> object:
        if name in renamed:
            new, value = renamed[name]
            deprecated(f"{module}.{name}", f"{module}.{new}")
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
