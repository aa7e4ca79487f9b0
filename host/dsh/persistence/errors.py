"""The errors of the storage layer.

    DshError (dsh.base.errors)
    ├── StorageError                 storage failed or refused: 503 storage_unavailable
    │   ├── SessionNotFound(LookupError)  no such Session, stored or live: 404 session_not_found
    │   ├── SessionExists            creating a Session that is already stored
    │   ├── IntegrityError           a batch that does not continue at the stored cursor
    │   ├── LogChanged               a log rewritten behind this process's back
    │   ├── CorruptLog               a malformed record that is not a torn tail: 500 storage_corrupt
    │   ├── DivergedLog              a stored log that is not a prefix of the live one
    │   ├── StorageRefused           events storage can never hold as they are: 500 storage_refused
    │   ├── DataDirBusy              another `dsh web` holds the JSONL data directory
    │   ├── UnsafeDataDir            a data dir another user owns or could change
    │   ├── LeaseHeld                another host holds the Session's lease
    │   └── LeaseLost                a write refused because its lease is gone
    ├── CoordinatorClosed(RuntimeError)  `attach` after the coordinator closed
    ├── BackendChoiceError(ValueError)   a `--store` URL that cannot be used
    └── SchemaTooNew                 a database whose dsh schema is newer than this dsh

`SessionNotFound` is the one "no such Session" of the whole host: a backend
raises it for an id it does not hold, a Host for one that is neither live
nor stored (`dsh.SessionNotFound`). It is a `StorageError` because that is
where a Session is looked for last; its own code and status say 404.
"""

from __future__ import annotations

from pathlib import Path

from ..base.errors import DshError, Unretryable

__all__ = [
    "BackendChoiceError",
    "CoordinatorClosed",
    "CorruptLog",
    "DataDirBusy",
    "DivergedLog",
    "IntegrityError",
    "LeaseHeld",
    "LeaseLost",
    "LogChanged",
    "SchemaTooNew",
    "SessionExists",
    "SessionNotFound",
    "StorageError",
    "StorageRefused",
    "UnsafeDataDir",
]


class StorageError(DshError):
    """Storage failed or refused an operation. The message names the Session or file."""

    code = "storage_unavailable"
    status = 503

    def refusal_message(self) -> str:
        return f"storage failed: {self}"


class SessionNotFound(StorageError, LookupError):
    """No Session with that id: not stored (`append`, `read`, `trash`, `restore` of an
    id storage does not hold), or, from a Host, neither live nor stored."""

    code = "session_not_found"
    status = 404

    def refusal_message(self) -> str:
        return str(self)


class SessionExists(StorageError):
    """`initialize` was asked to create a Session that is already stored."""


class IntegrityError(StorageError):
    """A batch does not continue exactly at the stored cursor; nothing was stored."""

    def __init__(self, session_id: str, expected: int, got: int | None) -> None:
        found = "an empty batch" if got is None else f"seq {got}"
        super().__init__(
            f"session {session_id}: a batch must continue at seq {expected}, found {found}"
        )
        self.session_id = session_id
        self.expected = expected
        self.got = got


class LogChanged(StorageError):
    """The stored log changed since this backend last wrote it, other than by its own
    appends (another process, a restore, an editor). Nothing was stored; the next
    call works from what storage holds now, so a caller compares before continuing."""


class CorruptLog(StorageError):
    """A stored record is malformed and is not a torn tail (a crash artefact)."""

    code = "storage_corrupt"
    status = 500

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        super().__init__(f"{path}: line {line}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason

    def refusal_message(self) -> str:
        return str(self)


class DivergedLog(StorageError):
    """Storage holds a log under this Session's id that is not a prefix of it."""


class StorageRefused(StorageError, Unretryable):
    """Storage refused a write for what it holds, not for how it is: a value one of its
    types can never hold (say a column that refuses it). Nothing of the refused write
    was stored, and retrying the same events cannot help; the message names them."""

    code = "storage_refused"
    status = 500

    def refusal_message(self) -> str:
        return f"storage refused to store it: {self}"


class DataDirBusy(StorageError):
    """Another process holds the data directory's lock."""

    def __init__(self, data_dir: Path, pid: int | None) -> None:
        holder = f"PID {pid}" if pid is not None else "PID unknown"
        super().__init__(f"the data dir {data_dir} is in use by another dsh web ({holder})")
        self.data_dir = data_dir
        self.pid = pid


class UnsafeDataDir(StorageError):
    """A data dir (or a folder above it, or an entry in it) that another user owns or
    could change (`dsh.persistence.datadir.check_data_dir`); the message names the
    path and the fix."""


class LeaseHeld(StorageError):
    """Another host holds the Session's lease; `owner` names it, `expires_in` is how
    many seconds its lease has left (None: it never expires on its own)."""

    def __init__(self, session_id: str, owner: str, expires_in: float | None) -> None:
        until = "" if expires_in is None else f" for up to {max(expires_in, 0.0):.1f} s more"
        super().__init__(f"session {session_id} is live on host {owner}{until}")
        self.session_id = session_id
        self.owner = owner
        self.expires_in = expires_in


class LeaseLost(StorageError):
    """A write was refused because the writer's lease on the Session is no longer
    valid (it expired, or another host took the Session over). Nothing was stored;
    retrying cannot help."""


class CoordinatorClosed(DshError, RuntimeError):
    """`attach` was called after `aclose`."""


class BackendChoiceError(DshError, ValueError):
    """A store URL that cannot be used; the message says why and what to write instead."""


class SchemaTooNew(DshError):
    """The database's dsh schema is newer than this dsh knows."""
