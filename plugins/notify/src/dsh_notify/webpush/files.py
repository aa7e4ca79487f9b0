"""`write_private(path, data)`: replace a small private file; a crash leaves the old or the new one.

The records Web Push keeps on a JSONL data dir (the VAPID key pair, the
subscriptions) are small JSON files read whole and written whole. A write
goes to a temporary file in the same directory (mode 0600 from its
creation, so a secret is never readable by others, not even for a moment),
is fsync'd, renamed over the old file, and the directory is fsync'd so the
rename itself survives a power loss.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["write_private"]


def write_private(path: Path, data: bytes) -> None:
    """Atomically make `path` hold `data`, mode 0600 (see the module docstring).

    Raises `OSError` when the directory is not writable or the disk is full;
    the old file is then untouched and no temporary file is left behind.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
