"""Where dsh keeps its data, and whether it may: the data dir is ours or refused.

`default_data_dir()` is `$DSH_DATA_DIR`, else `~/.local/share/dsh`.

`check_data_dir(directory)` refuses a data dir that another user could have
prepared or could change — where they could plant the access token, read
the logs or move them — with `UnsafeDataDir`, one message that names the
path and what to fix (as OpenSSH's StrictModes does for `~/.ssh`). Whoever
writes to a data dir checks it first: `dsh web` and `dsh index rebuild`
when they take its lock, `dsh sessions restore`, and the token file's
folder when the token comes from there. Reading commands do not: they write
nothing, and what they print is shown as text. The rules, for the
effective user ("us"):

1. **The folders above** it — every folder from `/` down, both as the path
   is written and as its symlinks resolve — belong to us or to root, and
   are not writable by group or others unless sticky (`/tmp` is fine: there
   nobody can rename or remove what is ours). Otherwise another user could
   swap the data dir for their own.
2. **The data dir**, when it exists, is a folder that belongs to us and that
   group and others cannot write. One that does not exist yet is made 0700
   by whoever writes first.
3. **`sessions/` and `trash/`**, when they exist, are real folders (never
   symlinks) with the same owner and mode rule; **every other entry** (the
   token, the lock, the attention and wake files) belongs to us and, unless
   it is a symlink, cannot be written by group or others. The logs inside
   `sessions/` and `trash/` are not listed one by one: in folders only we can
   write, nobody else can add, replace or move one.
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path

from .errors import StorageError, UnsafeDataDir

__all__ = ["DATA_DIR_ENV", "LOG_FOLDERS", "check_data_dir", "default_data_dir"]

DATA_DIR_ENV = "DSH_DATA_DIR"
LOG_FOLDERS = ("sessions", "trash")
_ROOT = 0


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$DSH_DATA_DIR` if set and not empty, else `~/.local/share/dsh`."""
    env = os.environ if environ is None else environ
    configured = env.get(DATA_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".local" / "share" / "dsh"


def check_data_dir(directory: Path) -> None:
    """Refuse `directory` as a data dir unless it is ours (the module docstring's rules).

    Raises `UnsafeDataDir` naming the path at fault and the fix, and
    `StorageError` when a folder cannot even be looked at.
    """
    given = Path(os.path.abspath(directory))
    try:
        _check(given, os.geteuid())
    except OSError as error:
        raise StorageError(
            f"cannot check the data dir {given}: {error.strerror or error}"
        ) from error


def _check(given: Path, uid: int) -> None:
    for folder in _above(given):
        _check_above(folder, given, uid)
    try:
        info = given.stat()
    except FileNotFoundError:
        return  # made 0700 by whoever writes first
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeDataDir(f"the data dir {given} is not a directory; pass one with --data-dir")
    _check_owned(given, info, uid, f"the data dir {given}")
    with os.scandir(given) as entries:
        for entry in sorted(entries, key=lambda item: item.name):
            try:
                found = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone meanwhile (a temporary file renamed into place)
            _check_entry(Path(entry.path), found, uid)


def _above(given: Path) -> Iterator[Path]:
    """The folders above `given`, as written and as resolved, each once, from `/` down."""
    seen: set[Path] = set()
    for path in (given, Path(os.path.realpath(given))):
        for folder in reversed(path.parents):
            if folder not in seen and folder.exists():
                seen.add(folder)
                yield folder


def _check_above(folder: Path, given: Path, uid: int) -> None:
    info = folder.stat()
    where = f"{folder}, a folder above the data dir {given},"
    if info.st_uid not in (uid, _ROOT):
        raise UnsafeDataDir(
            f"{where} belongs to {_user(info.st_uid)}: they could replace the data dir with "
            "their own; choose a data dir under folders only you or root own (--data-dir)"
        )
    if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
        raise UnsafeDataDir(
            f"{where} can be written by {_writers(info.st_mode)} (mode {_mode(info)}) and is not "
            f"sticky: another user could replace the data dir; run `chmod go-w {folder}` "
            f"(or `chmod +t {folder}`, as /tmp has), or choose another data dir"
        )


def _check_entry(path: Path, info: os.stat_result, uid: int) -> None:
    if path.name in LOG_FOLDERS:
        if stat.S_ISLNK(info.st_mode):
            raise UnsafeDataDir(
                f"{path} is a symlink; dsh keeps logs only in real folders of the data dir: "
                f"replace it with a folder (`rm {path}`, `mkdir -m 700 {path}`, and move the "
                "logs in)"
            )
        if not stat.S_ISDIR(info.st_mode):
            raise UnsafeDataDir(f"{path} is not a folder; move it out of the data dir")
    _check_owned(path, info, uid, str(path))


def _check_owned(path: Path, info: os.stat_result, uid: int, what: str) -> None:
    if info.st_uid != uid:
        raise UnsafeDataDir(
            f"{what} belongs to {_user(info.st_uid)}, not to {_user(uid)} who runs dsh: "
            f"another user could have planted a token or could read and move the logs; "
            f"run `chown {_name(uid)} {path}` if it is yours, else use a data dir of your own"
        )
    if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o022:
        raise UnsafeDataDir(
            f"{what} can be written by {_writers(info.st_mode)} (mode {_mode(info)}): "
            f"other users could plant a token or move the logs; run `chmod go-w {path}`"
        )


def _writers(mode: int) -> str:
    who = [name for name, bit in (("group", 0o020), ("others", 0o002)) if mode & bit]
    return " and ".join(who)


def _mode(info: os.stat_result) -> str:
    return f"{stat.S_IMODE(info.st_mode):04o}"


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _user(uid: int) -> str:
    return f"user {_name(uid)} (uid {uid})"
