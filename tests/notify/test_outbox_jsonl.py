"""`JsonlOutbox`: the contract, and what its file does across crashes and damage."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest
from dsh_notify.outbox import JsonlOutbox, OutboxBackend
from dsh_notify.outbox.jsonl import COMPACT_FACTOR, FILE_NAME

from dsh import StorageError

from .outbox_contract import OutboxContract
from .support import START_MS, delivery

pytestmark = pytest.mark.anyio


class TestJsonlOutbox(OutboxContract):
    @pytest.fixture(autouse=True)
    def _dir(self, tmp_path: Path) -> None:
        self.dir = tmp_path

    async def make(self, keep: int = 1000) -> OutboxBackend:
        outbox = JsonlOutbox(self.dir, keep=keep)
        await outbox.open()
        return outbox

    async def reopen(self, outbox: OutboxBackend) -> OutboxBackend:
        assert isinstance(outbox, JsonlOutbox)
        await outbox.aclose()
        return await self.make(outbox.state.keep)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


async def test_the_file_is_private_and_starts_with_its_header(tmp_path: Path) -> None:
    outbox = JsonlOutbox(tmp_path)
    await outbox.add([delivery(1)])
    await outbox.aclose()
    path = tmp_path / FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(lines(path)[0]) == {"format": "dsh-notify-outbox", "version": 1}
    assert json.loads(lines(path)[-1])["put"]["state"] == "pending"


@pytest.mark.parametrize("tail", [b'{"put": {"chan', b'{"put": {"chan\n'], ids=["open", "ended"])
async def test_a_torn_last_line_is_cut_and_the_rest_kept(tmp_path: Path, tail: bytes) -> None:
    outbox = JsonlOutbox(tmp_path)
    await outbox.add([delivery(1), delivery(2)])
    await outbox.aclose()
    path = tmp_path / FILE_NAME
    with path.open("ab") as file:
        file.write(tail)
    again = JsonlOutbox(tmp_path)
    await again.add([delivery(3)])
    await again.aclose()
    third = JsonlOutbox(tmp_path)
    claimed = await third.claim("test", START_MS, 5)
    assert [d.message.seq for d in claimed] == [1, 2, 3]
    assert all(json.loads(line) for line in lines(path))
    await third.aclose()


@pytest.mark.parametrize(
    "content",
    [
        b"not json\n",
        b'{"format": "other", "version": 1}\n',
        b'{"format": "dsh-notify-outbox", "version": 1}',
        b'{"format": "dsh-notify-outbox", "version": 1}\nnot json\n{"pruned": 1}\n',
        b'{"format": "dsh-notify-outbox", "version": 1}\n{"put": {"channel": 1}}\n',
        b'{"format": "dsh-notify-outbox", "version": 1}\n{"what": 1}\n',
        b'{"format": "dsh-notify-outbox", "version": 1}\n[1]\n',
        b'{"format": "dsh-notify-outbox", "version": 1}\n{"pruned": -1}\n',
    ],
    ids=[
        "no-header",
        "other-format",
        "torn-header",
        "bad-line",
        "bad-delivery",
        "unknown",
        "not-object",
        "negative-pruned",
    ],
)
async def test_an_unreadable_file_is_moved_aside_and_the_outbox_starts_empty(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / FILE_NAME).write_bytes(content)
    outbox = JsonlOutbox(tmp_path)
    with caplog.at_level(logging.ERROR):
        await outbox.open()
    aside = [name for name in os.listdir(tmp_path) if name.startswith(f"{FILE_NAME}.unreadable-")]
    assert [(tmp_path / name).read_bytes() for name in aside] == [content]
    assert "moved to" in caplog.text
    assert outbox.counts.pending == 0
    await outbox.add([delivery(1)])
    await outbox.aclose()
    assert len(lines(tmp_path / FILE_NAME)) == 3  # header, pruned, the delivery


async def test_an_unreadable_file_that_cannot_be_moved_is_an_error(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"not json\n")
    calls = []

    def failing_sync(fd: int) -> None:
        calls.append(fd)
        raise OSError("disk gone")

    outbox = JsonlOutbox(tmp_path, sync=failing_sync)
    with pytest.raises(StorageError, match="nor moved aside"):
        await outbox.open()
    await outbox.aclose()


async def test_a_file_that_cannot_be_opened_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    outbox = JsonlOutbox(tmp_path)
    with pytest.raises(StorageError, match="cannot open"):
        await outbox.open()
    await outbox.aclose()


async def test_a_fifo_under_its_name_is_a_storage_error_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / FILE_NAME)
    outbox = JsonlOutbox(tmp_path)
    with pytest.raises(StorageError, match="cannot read"):
        await outbox.open()
    await outbox.aclose()


async def test_a_symlink_under_its_name_is_not_followed(tmp_path: Path) -> None:
    os.symlink(tmp_path / "elsewhere", tmp_path / FILE_NAME)
    outbox = JsonlOutbox(tmp_path)
    with pytest.raises(StorageError, match="cannot open"):
        await outbox.open()
    await outbox.aclose()


async def test_a_failed_write_keeps_nothing_and_is_cut_before_the_next(tmp_path: Path) -> None:
    fail = [False]

    def sync(fd: int) -> None:
        if fail[0]:
            os.write(fd, b'{"put": ')  # what a failing disk may leave behind
            raise OSError("no space left")
        os.fsync(fd)

    outbox = JsonlOutbox(tmp_path, sync=sync)
    await outbox.add([delivery(1)])
    fail[0] = True
    with pytest.raises(StorageError, match="cannot write"):
        await outbox.add([delivery(2)])
    assert outbox.counts.pending == 1
    fail[0] = False
    await outbox.add([delivery(3)])
    await outbox.aclose()
    again = JsonlOutbox(tmp_path)
    assert [d.message.seq for d in await again.claim("test", START_MS, 5)] == [1, 3]
    await again.aclose()


async def test_a_snapshot_that_cannot_be_written_is_a_storage_error(tmp_path: Path) -> None:
    def sync(fd: int) -> None:
        raise OSError("read-only")

    outbox = JsonlOutbox(tmp_path, sync=sync)
    with pytest.raises(StorageError, match="cannot write"):
        await outbox.add([delivery(1)])
    assert os.listdir(tmp_path) == []  # the temp file is gone too
    await outbox.aclose()


async def test_a_file_of_many_changes_is_compacted_on_open(tmp_path: Path) -> None:
    outbox = JsonlOutbox(tmp_path)
    await outbox.add([delivery(1)])
    for attempt in range(1, 1100):
        [claimed] = await outbox.claim("test", START_MS + attempt * 10, 1)
        at = START_MS + attempt * 10
        again = claimed.moved("pending", attempts=attempt, next_at=at, error="x", now=at)
        assert await outbox.settle(again)
    await outbox.aclose()
    path = tmp_path / FILE_NAME
    assert len(lines(path)) > COMPACT_FACTOR * 1
    reopened = JsonlOutbox(tmp_path)
    await reopened.open()
    assert len(lines(path)) == 3
    [kept] = await reopened.claim("test", START_MS + 10**9, 1)
    assert kept.attempts == 1099
    await reopened.aclose()
