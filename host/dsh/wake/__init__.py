"""Waking cold Sessions and hibernating idle ones (DESIGN §7 "Waking cold Sessions").

- `store`: `WakeBackend`, where the wake index is kept between runs (the
  interface a PostgreSQL table fills too), and `MemoryWakeBackend`;
- `jsonl`: `JsonlWakeBackend`, the file `<data-dir>/wake-index.jsonl`;
- `timer`: `WakeTimer`, one timer for many Sessions;
- `index`: `WakeIndex`, the in-memory index, its crash rules and the wakes;
- `hibernation`: `Hibernator`, closing idle live Sessions;
- `lifecycle`: `SessionLifecycle`, the four points where the Host calls in;
- `stores`: which wake store goes with which Session store.
"""

from .backend import LoadedIndex, MemoryWakeBackend, WakeBackend, WakeEntry
from .errors import WakeBackendError, WakeIndexUnavailable
from .hibernation import Hibernator
from .index import WakeIndex
from .jsonl import JsonlWakeBackend
from .lifecycle import LifecycleObserver, SessionLifecycle
from .timer import WakeTimer

__all__ = [
    "Hibernator",
    "JsonlWakeBackend",
    "LifecycleObserver",
    "LoadedIndex",
    "MemoryWakeBackend",
    "SessionLifecycle",
    "WakeBackend",
    "WakeBackendError",
    "WakeEntry",
    "WakeIndex",
    "WakeIndexUnavailable",
    "WakeTimer",
]
