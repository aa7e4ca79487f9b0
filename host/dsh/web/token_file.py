"""The access token that survives restarts: `<data-dir>/token` (DESIGN §9, public).

Where the token of `dsh web` comes from, first match wins:

1. `$DSH_TOKEN`, when it is set and not empty (the file is neither read nor
   written; `--new-token` with it is an error, since it could not take effect);
2. `<data-dir>/token`, when it exists and `--new-token` was not given;
3. a fresh random token, written to `<data-dir>/token` (mode 0600) so the next
   start reuses it — this is what `--new-token` forces.

A tab opened before a restart therefore keeps working: the token in its
storage is still the one the host accepts.

**A token is at least `MIN_TOKEN_CHARS` (16) characters, none of them
whitespace or a control character** (`check_token`), wherever it comes
from: `DSH_TOKEN=a`, a blank or a multi-line value stops `dsh web` at once
with one line naming the variable (or file) and the rule — never the value.
A token of 16 characters guessed at the rate limit of failed attempts
(`dsh.web.guards`) is out of reach; the ones dsh makes have 32.

**Which data dir.** For the JSONL store the file sits next to the Sessions, in
the store's own directory (`--data-dir`, or the `DIR` of `--store jsonl:DIR`).
For any other store (`memory:`, PostgreSQL) it is in `--data-dir` (else
`$DSH_DATA_DIR`, else `~/.local/share/dsh`): the token belongs to the host
process, not to the Sessions, and each host of a shared database keeps its own.

**A file that is not a sound secret is refused, never repaired silently**: one
in a folder that is not ours, or that belongs to another user
(`dsh.persistence.datadir.check_data_dir`, which checks the folder first), one
readable or writable by other users (mode `& 0o077`), a symlink, not a regular
file, empty, or holding anything but one line of URL-safe characters is a
`TokenFileError` naming the file and the fix (`chmod 600 FILE`, or
`--new-token` to replace it). A new file is written atomically (a temporary
file created 0600 with `O_EXCL`, fsynced, renamed over, the directory
fsynced), so a crash never leaves a half-written token behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..persistence.backends import BackendChoice, JsonlSettings
from ..persistence.datadir import check_data_dir
from ..persistence.errors import StorageError, UnsafeDataDir
from .errors import TokenError, TokenFileError

__all__ = [
    "MIN_TOKEN_CHARS",
    "TOKEN_ENV",
    "TOKEN_FILE",
    "TokenChoice",
    "check_token",
    "choose_token",
    "read_token",
    "token_path",
]

log = logging.getLogger(__name__)

TOKEN_ENV = "DSH_TOKEN"
TOKEN_FILE = "token"
TOKEN_BYTES = 24
FILE_MODE = 0o600
DIRECTORY_MODE = 0o700
MAX_TOKEN_CHARS = 512
MIN_TOKEN_CHARS = 16
RULE = f"at least {MIN_TOKEN_CHARS} characters, no whitespace or control characters"
# What `secrets.token_urlsafe` writes, and what a person may reasonably have put there.
_TOKEN = re.compile(r"[A-Za-z0-9._~+/=-]+")


@dataclass(frozen=True, slots=True)
class TokenChoice:
    """The token `dsh web` serves with and where it came from."""

    token: str
    source: Literal["environment", "file", "new"]
    path: Path | None


def token_path(choice: BackendChoice, data_dir: Path) -> Path:
    """Where the token file of a host using `store` lives (see the module docstring)."""
    settings = choice.settings
    directory = settings.directory if isinstance(settings, JsonlSettings) else data_dir
    return directory / TOKEN_FILE


def check_token(token: str, source: str) -> str:
    """`token`, when it follows the rule (module docstring); else `TokenError` naming
    `source` (say `$DSH_TOKEN`) and the rule, never the token itself."""
    if any(char.isspace() or not char.isprintable() for char in token):
        problem = "holds whitespace or a control character"
    elif len(token) < MIN_TOKEN_CHARS:
        problem = f"has {len(token)} character{'s' if len(token) != 1 else ''}"
    else:
        return token
    raise TokenError(
        f"{source} is not a usable access token: it {problem}, and a token needs {RULE}; "
        f"""generate one with python3 -c 'import secrets; print(secrets.token_urlsafe(24))'"""
    )


def choose_token(
    path: Path, *, new: bool = False, environ: Mapping[str, str] | None = None
) -> TokenChoice:
    """The token to serve with (module docstring), creating or replacing `path` as needed.

    Raises `TokenError` for a `$DSH_TOKEN` that breaks the rule, and
    `TokenFileError` for an unusable file, a file that cannot be written, or
    `new` while `$DSH_TOKEN` is set.
    """
    env = os.environ if environ is None else environ
    fixed = env.get(TOKEN_ENV)
    if fixed:
        if new:
            raise TokenFileError(
                f"--new-token cannot replace the token while ${TOKEN_ENV} is set; "
                f"unset {TOKEN_ENV} or drop --new-token"
            )
        return TokenChoice(check_token(fixed, f"${TOKEN_ENV}"), "environment", None)
    try:
        check_data_dir(path.parent)  # where the token is read from, or written to
    except UnsafeDataDir as error:
        raise TokenFileError(str(error)) from error
    except StorageError:
        pass  # a folder that cannot even be looked at: reading or writing the file says why
    if not new:
        kept = read_token(path)
        if kept is not None:
            return TokenChoice(kept, "file", path)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    _write(path, token)
    log.info("dsh web: a new access token is kept in %s (--new-token replaces it)", path)
    return TokenChoice(token, "new", path)


def read_token(path: Path) -> str | None:
    """The token stored at `path`, or None when there is no file; `TokenFileError` for a
    file that is not a sound secret (module docstring)."""
    fix = f"run `chmod 600 {path}`, or start with --new-token to replace it"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        if path.is_symlink():
            raise TokenFileError(
                f"the token file {path} is a symlink; remove it, or start with --new-token"
            ) from None
        raise TokenFileError(f"cannot read the token file {path}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TokenFileError(
                f"the token file {path} is not a regular file; remove it, or start with --new-token"
            )
        if info.st_mode & 0o077:
            mode = stat.S_IMODE(info.st_mode)
            raise TokenFileError(
                f"the token file {path} is open to other users (mode {mode:04o}); {fix}"
            )
        raw = os.read(fd, MAX_TOKEN_CHARS + 2)
    finally:
        os.close(fd)
    text = raw.decode("ascii", errors="replace").strip()
    too_short = len(text) < MIN_TOKEN_CHARS
    if len(raw) > MAX_TOKEN_CHARS + 1 or too_short or not _TOKEN.fullmatch(text):
        raise TokenFileError(
            f"the token file {path} does not hold a token (one line of at least "
            f"{MIN_TOKEN_CHARS} letters, digits and -._~+/=); start with --new-token to replace it"
        )
    return text


def _write(path: Path, token: str) -> None:
    """Put `token` at `path` atomically, mode 0600 (module docstring)."""
    directory = path.parent
    temporary = directory / f".{path.name}.{secrets.token_hex(4)}.tmp"
    try:
        directory.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(f"{token}\n".encode("ascii"))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
        _fsync_directory(directory)
    except OSError as error:
        raise TokenFileError(
            f"cannot write the token file {path}: {error.strerror or error}; "
            f"pick a writable --data-dir or set {TOKEN_ENV}"
        ) from None


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
