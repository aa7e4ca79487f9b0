"""The version of dsh (the `dsh-host` distribution's; `/api/health` reports it)."""

from __future__ import annotations

__all__ = ["VERSION"]

VERSION = "0.1.0"
