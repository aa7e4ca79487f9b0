"""The attention file: torn tails, an unreadable file set aside, failed writes, compaction."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from dsh.attention import jsonl
from dsh.attention.backend import KEEP_READ_MS
from dsh.attention.jsonl import FILE_NAME, JsonlAttentionBackend
from dsh.persistence.errors import StorageError

from .test_backends import NOW, A, B, alert

pytestmark = pytest.mark.anyio


def lines(path: Path) -> list[object]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


async def test_the_file_starts_with_its_header_one_line_per_change_and_is_private(
    tmp_path: Path,
) -> None:
    backend = JsonlAttentionBackend(tmp_path)
    await backend.record(A, [], 1)  # the first write makes the file (a snapshot)
    await backend.record(A, [alert(A, 3)], 4)
    await backend.read(A, 4)
    await backend.forget(B)
    path = tmp_path / FILE_NAME
    assert lines(path) == [
        {"format": "dsh-attention", "version": 1},
        {"id": A, "checked": 1},
        {"id": A, "alert": {
            "seq": 3, "title": "stretch", "body": "due 9:00", "tag": f"{A}/3", "at": NOW
        }},
        {"id": A, "checked": 4},
        {"id": A, "read": 4},
        {"id": B, "forget": True},
    ]  # fmt: skip
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    await backend.aclose()


async def test_a_torn_last_line_is_ignored_and_cut_before_the_next_write(tmp_path: Path) -> None:
    first = JsonlAttentionBackend(tmp_path)
    await first.record(A, [alert(A, 3)], 4)
    await first.aclose()
    path = tmp_path / FILE_NAME
    with path.open("ab") as file:
        file.write(b'{"id": "' + A.encode() + b'", "rea')
    second = JsonlAttentionBackend(tmp_path)
    assert await second.unread() == {A: 1}
    await second.read(A, 4)
    await second.aclose()
    assert lines(path)[-1] == {"id": A, "read": 4}
    third = JsonlAttentionBackend(tmp_path)
    assert await third.unread() == {}
    await third.aclose()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"format": "other", "version": 1}\n', "not the header of dsh-attention"),
        (b"", "line 1 is not its header"),
        (b'{"format": "dsh-attention", "version": 1}', "its header line is torn"),
        (b'{"format": "dsh-attention", "version": 1}\n[1]\n{}\n', "line 2: not an attention"),
        (
            b'{"format": "dsh-attention", "version": 1}\n{"id": "../x", "read": 1}\n{}\n',
            "line 2: ",
        ),
        (
            b'{"format": "dsh-attention", "version": 1}\n{"id": "aaaaaaaaaaaaaaaa", "read": -1}'
            b"\n{}\n",
            "line 2: read is not a count",
        ),
        (
            b'{"format": "dsh-attention", "version": 1}\nnot json\n{"id": "x"}\n',
            "line 2 is not JSON",
        ),
        (
            b'{"format": "dsh-attention", "version": 1}\n'
            b'{"id": "aaaaaaaaaaaaaaaa", "alert": {"seq": 1}}\n',
            "an alert has other keys",
        ),
    ],
)
async def test_a_file_that_cannot_be_read_is_set_aside_and_counts_start_over(
    tmp_path: Path, content: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / FILE_NAME
    path.write_bytes(content)
    backend = JsonlAttentionBackend(tmp_path)
    with caplog.at_level(logging.ERROR):
        assert await backend.unread() == {}
    aside = sorted(tmp_path.glob(f"{FILE_NAME}.unreadable-*"))  # noqa: ASYNC240 (a test's look)
    assert len(aside) == 1 and aside[0].read_bytes() == content  # kept, never deleted
    assert reason in caplog.text and "unread counts start over" in caplog.text
    await backend.record(A, [alert(A, 1)], 2)
    assert lines(path)[0] == {"format": "dsh-attention", "version": 1}
    await backend.aclose()


async def test_a_write_that_fails_changes_nothing_and_the_next_one_cuts_its_remains(
    tmp_path: Path,
) -> None:
    failing = [False]

    def sync(fd: int) -> None:
        if failing[0]:
            raise OSError(5, "Input/output error")
        os.fsync(fd)

    backend = JsonlAttentionBackend(tmp_path, sync=sync)
    await backend.record(A, [], 1)
    failing[0] = True
    with pytest.raises(StorageError, match=r"cannot write .*attention\.jsonl: .*Input/output"):
        await backend.record(A, [alert(A, 3)], 4)
    assert await backend.unread() == {} and await backend.checked(A) == 1
    failing[0] = False
    await backend.read(A, 1)
    await backend.aclose()
    assert lines(tmp_path / FILE_NAME)[1:] == [{"id": A, "checked": 1}, {"id": A, "read": 1}]


async def test_a_file_that_cannot_be_opened_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    with pytest.raises(StorageError, match="cannot open the attention file"):
        await JsonlAttentionBackend(tmp_path).unread()


async def test_opening_compacts_a_long_file_and_drops_old_read_alerts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "COMPACT_MIN_LINES", 8)
    first = JsonlAttentionBackend(tmp_path)
    old = NOW - KEEP_READ_MS - 1
    await first.record(A, [alert(A, 1, old), alert(A, 2, NOW)], 3)
    for through in range(1, 31):
        await first.read(B, through)
    await first.read(A, 2)
    await first.aclose()
    path = tmp_path / FILE_NAME
    assert len(lines(path)) > 8
    second = JsonlAttentionBackend(tmp_path, now=lambda: NOW)
    assert await second.unread() == {A: 1}
    assert lines(path) == [
        {"format": "dsh-attention", "version": 1},
        {"id": A, "checked": 3},
        {"id": A, "alert": {"seq": 2, "title": "stretch", "body": "due 9:00", "tag": f"{A}/2",
                            "at": NOW}},
        {"id": A, "read": 2},
        {"id": B, "read": 30},
    ]  # fmt: skip
    await second.record(B, [alert(B, 40)], 41)  # appends after the snapshot
    await second.aclose()
    third = JsonlAttentionBackend(tmp_path)
    assert await third.unread() == {A: 1, B: 1}
    await third.aclose()
