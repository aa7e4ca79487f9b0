"""The JSONL store, the embedded default: one file per Session (DESIGN §4).

One idea per module: `format` (the public line format), `files` (safe,
atomic file work), `index` (the rebuildable line-offset index and its
sidecar), `cache` (what is remembered between calls), `logs` (the blocking
file work), `backend` (`JsonlBackend`, the async `Backend`) and `lock`
(`DataDirLock`, one writing process per data directory).
"""

from ..errors import DataDirBusy
from .backend import JsonlBackend
from .lock import DataDirLock

__all__ = ["DataDirBusy", "DataDirLock", "JsonlBackend"]
