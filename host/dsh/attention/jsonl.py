"""Alerts and read marks of a JSONL store: one file beside the logs, `<data-dir>/attention.jsonl`.

Format (version 1; UTF-8, one JSON object per `\\n`-terminated line):

    {"format": "dsh-attention", "version": 1}
    {"id": "<session id>", "checked": 12}
    {"id": "<session id>", "alert": {"seq": 10, "title": "…", "body": "…", "tag": "…", "at": 17…}}
    {"id": "<session id>", "read": 11}
    {"id": "<session id>", "forget": true}

Each line after the first is one change of one Session's entry
(`dsh.attention.backend`), applied in order: `checked` and `read` move
forward only, an alert of a seq already there changes nothing, `forget`
drops the entry (its Session was deleted). Each
operation appends its lines with one write and one fdatasync, in one worker
thread, never on the loop; opening compacts a file that holds more than
`COMPACT_FACTOR` lines per thing it keeps (a snapshot: temp file, fsync,
rename, fsync of the directory), dropping read alerts older than a day.

A torn last line (no newline, or not JSON) is a crash artefact: ignored and
truncated before the next append. Any other malformed line makes the file
unusable: it is moved aside (`attention.jsonl.unreadable-<time>`, kept, never
deleted) and the host starts with no read marks, saying so in its log —
read marks are the person's and cannot be derived again.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter

from ..persistence.errors import StorageError
from ..persistence.jsonl.files import Sync, open_regular, read_all, sync_directory
from ..persistence.jsonl.snapshots import SnapshotFile
from ..session.errors import InvalidSessionId
from ..session.ids import validate_session_id
from .alert import Alert
from .backend import AttentionBackend, AttentionRecord, AttentionState

__all__ = ["FILE_NAME", "FORMAT", "VERSION", "JsonlAttentionBackend"]

log = logging.getLogger(__name__)

FORMAT = "dsh-attention"
VERSION = 1
FILE_NAME = "attention.jsonl"
COMPACT_MIN_LINES = 1024
COMPACT_FACTOR = 4
_T = TypeVar("_T")


class _Unusable(Exception):
    """The file cannot be read as this format; the message says why."""


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _alert_line(alert: Alert) -> bytes:
    body = {"seq": alert.seq, "title": alert.title, "body": alert.body, "tag": alert.tag}
    return _line({"id": alert.session_id, "alert": {**body, "at": alert.at}})


def _int(value: object, what: str) -> int:
    if type(value) is not int or value < 0:
        raise _Unusable(f"{what} is not a count")
    return value


def _str(value: object, what: str) -> str:
    if type(value) is not str:
        raise _Unusable(f"{what} is not a string")
    return value


def _apply(state: AttentionState, record: object) -> None:
    """Apply one line's change; `_Unusable` for anything that is not one."""
    if type(record) is not dict or "id" not in record or len(record) != 2:
        raise _Unusable("not an attention record")
    try:
        session_id = validate_session_id(_str(record["id"], "id"))
    except InvalidSessionId as error:
        raise _Unusable(str(error)) from None
    if "checked" in record:
        state.record(session_id, (), _int(record["checked"], "checked"))
    elif "read" in record:
        state.read(session_id, _int(record["read"], "read"))
    elif record.get("forget") is True:
        state.forget(session_id)
    elif "alert" in record and type(record["alert"]) is dict:
        fields = record["alert"]
        if set(fields) != {"seq", "title", "body", "tag", "at"}:
            raise _Unusable("an alert has other keys than seq, title, body, tag, at")
        alert = Alert(
            session_id,
            _int(fields["seq"], "seq"),
            _str(fields["title"], "title"),
            _str(fields["body"], "body"),
            _str(fields["tag"], "tag"),
            _int(fields["at"], "at"),
        )
        entry_checked = state.checked(session_id)
        state.record(session_id, [alert], entry_checked if entry_checked is not None else 0)
    else:
        raise _Unusable("not an attention record")


def parse(payload: bytes) -> tuple[AttentionState, int, int]:
    """`(state, lines, valid_size)` of the file's bytes (a torn last line left out)."""
    lines = payload.split(b"\n")
    try:
        header = json.loads(lines[0])
    except (ValueError, UnicodeDecodeError):
        raise _Unusable("line 1 is not its header") from None
    if header != {"format": FORMAT, "version": VERSION}:
        raise _Unusable(f"line 1 is {header!r}, not the header of {FORMAT} version {VERSION}")
    if len(lines) == 1:
        raise _Unusable("its header line is torn")
    state = AttentionState()
    complete = lines[1:-1]
    valid = len(lines[0]) + 1
    for number, raw in enumerate(complete, start=2):
        try:
            record = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            if number == len(lines) - 1:
                break  # the last complete line is not JSON: torn, like a log's
            raise _Unusable(f"line {number} is not JSON") from None
        try:
            _apply(state, record)
        except _Unusable as error:
            raise _Unusable(f"line {number}: {error}") from None
        valid += len(raw) + 1
    return state, len(complete) + 1, valid


def snapshot(state: AttentionState) -> bytes:
    """The whole state as a file's bytes."""
    parts = [_line({"format": FORMAT, "version": VERSION})]
    for session_id, entry in sorted(state.entries.items()):
        if entry.checked is not None:
            parts.append(_line({"id": session_id, "checked": entry.checked}))
        parts.extend(_alert_line(alert) for _, alert in sorted(entry.alerts.items()))
        if entry.read:
            parts.append(_line({"id": session_id, "read": entry.read}))
    return b"".join(parts)


class JsonlAttentionBackend(AttentionBackend):
    """Alerts and read marks in `<data_dir>/attention.jsonl` (see the module docstring).

    `sync` replaces every fsync (file and directory), for tests that inject
    faults at the durability point; `now` (epoch ms) dates the pruning of old
    read alerts.
    """

    def __init__(
        self,
        data_dir: Path | str,
        *,
        sync: Sync | None = None,
        now: Callable[[], int] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / FILE_NAME
        self.description = f"the attention file {self.path}"
        self._sync: Sync = sync or os.fsync
        self._now = now or (lambda: int(time.time() * 1000))
        self.state = AttentionState()
        self._file = SnapshotFile(self.path, self._sync)
        self._opened = False
        self._limiter: CapacityLimiter | None = None

    async def open(self) -> None:
        await self._run(self._open)

    async def checked(self, session_id: str) -> int | None:
        await self._opening()
        return self.state.checked(session_id)

    async def record(self, session_id: str, alerts: Sequence[Alert], checked: int) -> int:
        lines = [_alert_line(alert) for alert in alerts]
        lines.append(_line({"id": session_id, "checked": checked}))
        return await self._run(
            self._append, lines, lambda state: state.record(session_id, alerts, checked)
        )

    async def read(self, session_id: str, through: int) -> int:
        line = _line({"id": session_id, "read": through})
        return await self._run(self._append, [line], lambda state: state.read(session_id, through))

    async def forget(self, session_id: str) -> None:
        line = _line({"id": session_id, "forget": True})
        await self._run(self._append, [line], lambda state: state.forget(session_id))

    async def unread(self, session_ids: Collection[str] | None = None) -> dict[str, int]:
        await self._opening()
        return self.state.unread(session_ids)

    async def since(self, at: int, limit: int) -> list[Alert]:
        await self._opening()
        return self.state.since(at, limit)

    async def alerts(self, session_id: str, seqs: Collection[int]) -> list[Alert]:
        await self._opening()
        return self.state.alerts(session_id, seqs)

    async def records(self) -> list[AttentionRecord]:
        await self._opening()
        return self.state.records()

    async def aclose(self) -> None:
        await self._run(self._close)

    # -- in the worker thread ----------------------------------------------------------

    async def _opening(self) -> None:
        if not self._opened:
            await self.open()

    def _open(self) -> None:
        if self._opened:
            return
        self._opened = True
        try:
            opened = open_regular(self.path, os.O_RDWR | os.O_APPEND)
        except StorageError as error:
            raise StorageError(f"cannot open {self.description}: {error}") from error
        if opened is None:
            return  # none yet: the first write makes it
        fd, _ = opened
        try:
            state, lines, valid = parse(read_all(fd))
        except _Unusable as error:
            os.close(fd)
            self._set_aside(str(error))
            return
        except OSError as error:
            os.close(fd)
            raise StorageError(f"cannot read {self.path}: {error}") from error
        self.state = state
        self._file.adopt(fd, lines, valid)
        kept = sum(len(entry.alerts) + 2 for entry in state.entries.values())
        if lines > max(COMPACT_MIN_LINES, COMPACT_FACTOR * kept):
            state.prune(self._now())
            self._replace(state)

    def _set_aside(self, reason: str) -> None:
        aside = self.path.with_name(f"{FILE_NAME}.unreadable-{int(time.time())}")
        try:
            os.replace(self.path, aside)
            sync_directory(self.data_dir, self._sync)
        except OSError as error:
            problem = f"{self.path} cannot be read ({reason}) nor moved aside: {error}"
            raise StorageError(problem) from error
        log.error(
            "%s cannot be read (%s): moved to %s; unread counts start over",
            self.path,
            reason,
            aside,
        )

    def _append(self, lines: list[bytes], apply: Callable[[AttentionState], _T]) -> _T:
        self._open()
        if not self._file.is_open:  # no file yet (or it was set aside): a snapshot makes it
            candidate = copy.deepcopy(self.state)
            result = apply(candidate)
            self._replace(candidate)
            self.state = candidate
            return result
        try:
            self._file.append(b"".join(lines))
        except OSError as error:
            raise StorageError(f"cannot write {self.path}: {error}") from error
        return apply(self.state)

    def _replace(self, state: AttentionState) -> None:
        try:
            self._file.replace(snapshot(state))
        except OSError as error:
            raise StorageError(f"cannot write {self.path}: {error}") from error

    def _close(self) -> None:
        self._file.close()

    async def _run(self, func: Callable[..., _T], *args: Any) -> _T:
        if self._limiter is None:
            self._limiter = CapacityLimiter(1)
        return await anyio.to_thread.run_sync(func, *args, limiter=self._limiter)
