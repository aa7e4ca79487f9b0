"""Persistence: the coordinator that writes live Sessions, and the storage backends.

`PersistenceCoordinator` attaches one controller per live Session as its
listener (the durability acknowledgement behind `LiveSessions.flush`);
`Backend` is the storage contract, `JsonlBackend` the embedded default and
`MemoryBackend` a volatile stand-in with the same contract.
"""

from ..base.backoff import Backoff
from .backend import Backend, LogMark, StoredSession, StoredSummary
from .coordinator import PersistenceCoordinator, Unconfirmed
from .errors import (
    CoordinatorClosed,
    CorruptLog,
    DataDirBusy,
    DivergedLog,
    IntegrityError,
    LogChanged,
    SessionExists,
    SessionNotFound,
    StorageError,
    StorageRefused,
)
from .jsonl import DataDirLock, JsonlBackend
from .memory import MemoryBackend

__all__ = [
    "Backend",
    "Backoff",
    "CoordinatorClosed",
    "CorruptLog",
    "DataDirBusy",
    "DataDirLock",
    "DivergedLog",
    "IntegrityError",
    "JsonlBackend",
    "LogChanged",
    "LogMark",
    "MemoryBackend",
    "PersistenceCoordinator",
    "SessionExists",
    "SessionNotFound",
    "StorageError",
    "StorageRefused",
    "StoredSession",
    "StoredSummary",
    "Unconfirmed",
]
