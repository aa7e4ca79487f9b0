"""Where dsh keeps its data when nobody says: `$DSH_DATA_DIR`, else `~/.local/share/dsh`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DATA_DIR_ENV", "default_data_dir"]

DATA_DIR_ENV = "DSH_DATA_DIR"


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$DSH_DATA_DIR` if set and not empty, else `~/.local/share/dsh`."""
    env = os.environ if environ is None else environ
    configured = env.get(DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".local" / "share" / "dsh"
