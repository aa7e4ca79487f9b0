"""The wake index of a JSONL store: one file next to the logs, `<data-dir>/wake-index.jsonl`.

Format (version 1; UTF-8, one JSON object per `\\n`-terminated line):

    {"format": "dsh-wake-index", "version": 1}
    {"id": "<session id>", "wakeAt": 1767225600000, "dirty": false}
    {"id": "<session id>", "wakeAt": null, "dirty": true}
    ...

Line 1 names the format and its version; every further line is the whole
entry of one Session (`dsh.wake.backend.WakeEntry`), and a later line for the
same id replaces an earlier one (`wakeAt: null, dirty: false` removes it).
Reading is strict: another format or version, a malformed record or an
invalid id makes the whole file unusable (`load` says why and the host
rebuilds from the logs). A torn last line — no newline, or not valid JSON —
is a crash artefact, exactly as in a log: it is ignored and truncated before
the next append.

Writing. `replace` writes a snapshot atomically: a hidden temp file in the
same directory, fsync, rename over the index, fsync the directory. Between
snapshots, `write` appends its changes as lines with one write and one
fdatasync, so a Session going live or cold costs a line, not a rewrite of
every entry (a 10,000-entry snapshot is ≈ 0.5 MB). Once the file holds more
than `COMPACT_FACTOR` lines per entry (and at least `COMPACT_MIN_LINES`), the
next write is a snapshot instead. Everything blocks, so it runs in one
worker thread (a capacity limiter of one), in order, never on the loop.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from pydantic import BaseModel, ConfigDict, ValidationError

from ..base.validation import describe
from ..persistence.errors import StorageError
from ..persistence.jsonl.files import Sync, open_regular, read_all, sync_directory
from ..persistence.jsonl.snapshots import SnapshotFile
from ..session.errors import InvalidSessionId
from ..session.ids import validate_session_id
from .backend import Change, LoadedIndex, WakeBackend, WakeEntry
from .errors import WakeBackendError

__all__ = ["FORMAT", "INDEX_NAME", "VERSION", "JsonlWakeBackend"]

FORMAT = "dsh-wake-index"
VERSION = 1
INDEX_NAME = "wake-index.jsonl"
COMPACT_MIN_LINES = 1024
COMPACT_FACTOR = 4
_T = TypeVar("_T")


class _Header(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    format: str
    version: int


class _Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: str
    wakeAt: int | None
    dirty: bool


_KEYS = frozenset(_Record.model_fields)


class _Unusable(Exception):
    """The file cannot be used as an index; the message says why."""


def encode_header() -> bytes:
    return _line({"format": FORMAT, "version": VERSION})


def encode_entry(session_id: str, entry: WakeEntry) -> bytes:
    return _line({"id": session_id, "wakeAt": entry.wake_at, "dirty": entry.dirty})


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def parse_index(payload: bytes) -> tuple[dict[str, WakeEntry], int, int]:
    """`(entries, lines, valid_size)` of an index file's bytes; raises `_Unusable`.

    `valid_size` excludes a torn last line, which is ignored.
    """
    lines = payload.split(b"\n")
    if not payload:
        raise _Unusable("it is empty")
    header = _decode(lines[0], _Header, 1)
    if header.format != FORMAT:
        raise _Unusable(f"line 1 names format {header.format!r}, not {FORMAT!r}")
    if header.version != VERSION:
        raise _Unusable(f"it has format version {header.version}; this dsh reads version {VERSION}")
    if len(lines) == 1:
        raise _Unusable("its header line is torn")
    complete = lines[1:-1]  # the last piece follows the last newline: empty or torn
    fast = _parse_all(complete)
    if fast is not None:
        return fast, len(complete) + 1, len(payload) - len(lines[-1])
    entries: dict[str, WakeEntry] = {}
    valid = len(lines[0]) + 1
    for number, raw in enumerate(complete, start=2):
        try:
            record = _decode(raw, _Record, number)
            validate_session_id(record.id)
        except (_Unusable, InvalidSessionId) as error:
            if number == len(lines) - 1:
                break  # the last complete line is not JSON: torn, like a log's
            raise _Unusable(str(error)) from None
        entry = WakeEntry(record.wakeAt, record.dirty)
        if entry.empty:
            entries.pop(record.id, None)
        else:
            entries[record.id] = entry
        valid += len(raw) + 1
    return entries, len(complete) + 1, valid


def _parse_all(lines: list[bytes]) -> dict[str, WakeEntry] | None:
    """Every record at once, or None when any line is wrong (the caller then finds which,
    line by line, through `_Record`).

    The same rules as `_Record` (exactly these keys, strict types), checked by hand:
    a pydantic model per line costs ≈ 8 µs, so 10,000 entries took ≈ 90 ms at
    start-up; one `json.loads` and these checks take about a tenth of that.
    """
    try:
        records = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, UnicodeDecodeError):
        return None
    entries: dict[str, WakeEntry] = {}
    for record in records:
        if type(record) is not dict or record.keys() != _KEYS:
            return None
        session_id, wake_at, dirty = record["id"], record["wakeAt"], record["dirty"]
        if type(session_id) is not str or type(dirty) is not bool:
            return None
        if wake_at is not None and type(wake_at) is not int:
            return None
        try:
            validate_session_id(session_id)
        except InvalidSessionId:
            return None
        entry = WakeEntry(wake_at, dirty)
        if entry.empty:
            entries.pop(session_id, None)
        else:
            entries[session_id] = entry
    return entries


def _decode(raw: bytes, model: type[Any], number: int) -> Any:
    try:
        return model.model_validate(json.loads(raw))
    except (ValueError, UnicodeDecodeError) as error:
        reason = describe(error) if isinstance(error, ValidationError) else "not JSON"
        raise _Unusable(f"line {number} is not a valid record: {reason}") from None


class JsonlWakeBackend(WakeBackend):
    """The wake index in `<data_dir>/wake-index.jsonl` (see the module docstring).

    `sync` replaces every fsync (file and directory), for tests that inject
    faults at the durability point.
    """

    def __init__(self, data_dir: Path | str, *, sync: Sync | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / INDEX_NAME
        self.description = f"the wake index {self.path}"
        self._sync: Sync = sync or os.fsync
        self._file = SnapshotFile(self.path, self._sync)
        self._entries: dict[str, WakeEntry] = {}
        self._limiter: CapacityLimiter | None = None

    # -- WakeBackend ------------------------------------------------------------

    async def load(self) -> LoadedIndex:
        return await self._run(self._load)

    async def write(self, changes: Sequence[Change]) -> None:
        await self._run(self._write, list(changes))

    async def replace(self, entries: Mapping[str, WakeEntry]) -> None:
        await self._run(self._replace, dict(entries))

    async def discard(self) -> None:
        await self._run(self._discard)

    async def aclose(self) -> None:
        await self._run(self._close)

    # -- in the worker thread ----------------------------------------------------

    def _load(self) -> LoadedIndex:
        self._file.close()
        try:
            opened = open_regular(self.path, os.O_RDWR | os.O_APPEND)
        except StorageError as error:
            return LoadedIndex(problem=str(error))
        if opened is None:
            return LoadedIndex(problem=f"there is no wake index at {self.path}", missing=True)
        fd, _ = opened
        try:
            entries, lines, valid = parse_index(read_all(fd))
        except _Unusable as error:
            os.close(fd)
            return LoadedIndex(problem=f"{self.path} cannot be used: {error}")
        except OSError as error:
            os.close(fd)
            return LoadedIndex(problem=f"cannot read {self.path}: {error}")
        self._file.adopt(fd, lines, valid)
        self._entries = entries
        return LoadedIndex(dict(entries))

    def _write(self, changes: list[Change]) -> None:
        if not changes:
            return
        merged = dict(self._entries)
        for session_id, entry in changes:
            if entry.empty:
                merged.pop(session_id, None)
            else:
                merged[session_id] = entry
        if not self._file.is_open or self._file.lines + len(changes) > self._compact_at(
            len(merged)
        ):
            self._replace(merged)
            return
        payload = b"".join(encode_entry(session_id, entry) for session_id, entry in changes)
        try:
            self._file.append(payload)
        except OSError as error:
            raise WakeBackendError(f"cannot write {self.path}: {error}") from error
        self._entries = merged

    def _compact_at(self, entries: int) -> int:
        return max(COMPACT_MIN_LINES, COMPACT_FACTOR * entries)

    def _replace(self, entries: dict[str, WakeEntry]) -> None:
        kept = {session_id: entry for session_id, entry in entries.items() if not entry.empty}
        payload = encode_header() + b"".join(
            encode_entry(session_id, entry) for session_id, entry in sorted(kept.items())
        )
        try:
            self._file.replace(payload)
        except OSError as error:
            raise WakeBackendError(f"cannot write {self.path}: {error}") from error
        self._entries = kept

    def _discard(self) -> None:
        self._file.close()
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            sync_directory(self.data_dir, self._sync)
        except OSError as error:
            raise WakeBackendError(f"cannot remove {self.path}: {error}") from error
        self._entries = {}

    def _close(self) -> None:
        self._file.close()

    async def _run(self, func: Callable[..., _T], *args: Any) -> _T:
        if self._limiter is None:
            self._limiter = CapacityLimiter(1)
        return await anyio.to_thread.run_sync(func, *args, limiter=self._limiter)
