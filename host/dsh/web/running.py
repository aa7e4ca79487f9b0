"""What a JSONL data dir remembers about the `dsh web` that runs (or ran) on it (DESIGN §11).

Two files, both written atomically with mode 0600 (a temporary file made
with `O_EXCL`, fsynced, renamed over, the folder fsynced):

- `<data-dir>/web.json` while `dsh web` serves: `{"url", "pid", "overlay",
  "startedAt"}` — the address without the token (`http://127.0.0.1:8765/`),
  the server's process id, the overlay's absolute path (null without one)
  and when it started (ISO 8601, UTC). It is written once the server
  listens, before the URL is printed, and removed on a clean stop. The token
  is never in it: it is `$DSH_TOKEN` or `<data-dir>/token`.
- `<data-dir>/overlay.path`: the absolute path of the overlay the last
  `dsh web` ran with, one line, kept after it stops (removed when it ran
  without one), so plugin commands (`dsh reminders list`) find their overlay
  while no host runs.

A `web.json` left by a process that died without a clean stop is **stale**:
`running_web` trusts it only while its pid is alive; whoever uses its URL
treats a refused connection as stale too (`dsh.cli.host_actions`). A file
that is unreadable, not ours to trust (a symlink, open to other users) or
malformed is treated as absent, never as a running host.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "OVERLAY_FILE",
    "WEB_FILE",
    "RunningWeb",
    "forget_run",
    "pid_alive",
    "remember_overlay",
    "remember_run",
    "remembered_overlay",
    "running_web",
]

WEB_FILE = "web.json"
OVERLAY_FILE = "overlay.path"
FILE_MODE = 0o600
MAX_BYTES = 64 * 1024


class RunningWeb(BaseModel):
    """The contents of `web.json`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    url: str
    pid: int = Field(ge=1)
    overlay: str | None
    started_at: str = Field(alias="startedAt")


def remember_run(
    directory: Path, url: str, overlay: Path | None, *, pid: int | None = None
) -> None:
    """Write `web.json` for the server at `url` (no token in it) and `overlay.path`.

    Raises `OSError` when the data dir cannot be written.
    """
    record = RunningWeb(
        url=url,
        pid=os.getpid() if pid is None else pid,
        overlay=None if overlay is None else str(overlay.absolute()),
        started_at=datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    )
    remember_overlay(directory, overlay)
    _write(directory / WEB_FILE, record.model_dump_json(by_alias=True, indent=2))


def remember_overlay(directory: Path, overlay: Path | None) -> None:
    """Keep `overlay`'s absolute path in `overlay.path`; without one, remove that file."""
    path = directory / OVERLAY_FILE
    if overlay is None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    _write(path, str(overlay.absolute()))


def forget_run(directory: Path, *, pid: int | None = None) -> None:
    """Remove `web.json` if it is this process's (or `pid`'s); another's is left alone."""
    path = directory / WEB_FILE
    record = _read_record(path)
    if record is not None and record.pid == (os.getpid() if pid is None else pid):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def running_web(directory: Path) -> RunningWeb | None:
    """The `dsh web` that `web.json` names, while its process is alive; else None."""
    record = _read_record(directory / WEB_FILE)
    if record is None or not pid_alive(record.pid):
        return None
    return record


def remembered_overlay(directory: Path) -> Path | None:
    """The overlay the last `dsh web` on the data dir ran with (`overlay.path`); None if none."""
    text = _read(directory / OVERLAY_FILE)
    line = None if text is None else text.strip()
    return Path(line) if line and "\n" not in line and Path(line).is_absolute() else None


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user's counts too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def _read_record(path: Path) -> RunningWeb | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return RunningWeb.model_validate_json(text)
    except ValidationError:
        return None


def _read(path: Path) -> str | None:
    """`path`'s text if it is a regular file of ours that others cannot write; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        trusted = (
            stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022
        )
        raw = os.read(fd, MAX_BYTES + 1) if trusted else b""
    finally:
        os.close(fd)
    if not raw or len(raw) > MAX_BYTES:
        return None
    return raw.decode("utf-8", errors="replace")


def _write(path: Path, text: str) -> None:
    directory = path.parent
    temporary = directory / f".{path.name}.{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(f"{text}\n".encode())
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
    folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
