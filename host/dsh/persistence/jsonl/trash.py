"""Reading the trash of a data dir (`<data-dir>/trash/`): which logs it holds, and one of them.

Blocking: the backend calls these from its reader threads. A trashed log is
read whole and not cached nor indexed (the trash is read rarely: `dsh store
copy`, `dsh sessions restore` of a start of an id).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...session.ids import SESSION_ID_PATTERN, validate_session_id
from ..backend import LogMark, StoredSession
from ..errors import StorageError
from .files import open_regular, read_all, storage_errors
from .format import SUFFIX
from .proven import read_log

__all__ = ["read_trashed", "trashed_ids"]


def trashed_ids(trash: Path) -> list[str]:
    """The ids of the logs in `trash`, sorted (anything else there is skipped)."""
    try:
        names = os.listdir(trash)
    except FileNotFoundError:
        return []
    except OSError as error:
        raise StorageError(f"cannot list {trash}: {error}") from error
    return sorted(
        name.removesuffix(SUFFIX)
        for name in names
        if name.endswith(SUFFIX) and SESSION_ID_PATTERN.fullmatch(name.removesuffix(SUFFIX))
    )


def read_trashed(trash: Path, session_id: str) -> StoredSession | None:
    """The trashed log of `session_id`, or None if `trash` does not hold one."""
    path = trash / (validate_session_id(session_id) + SUFFIX)
    with storage_errors(path, "read"):
        opened = open_regular(path)
        if opened is None:
            return None
        fd, _ = opened
        try:
            data = read_all(fd)
        finally:
            os.close(fd)
    index, events = read_log(path, session_id, data, None, None)
    return StoredSession(index.header, events, index.torn, LogMark(len(events), None))
