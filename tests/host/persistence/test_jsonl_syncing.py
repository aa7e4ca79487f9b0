"""A group commit's files made durable together (`dsh.persistence.jsonl.syncing`)."""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from dsh.persistence import JsonlBackend
from dsh.persistence.errors import StorageError
from dsh.persistence.jsonl import syncing
from dsh.persistence.jsonl.syncing import RoundSync

from .contract import events
from .test_jsonl import concurrent_appends, log_path, stored_sessions

pytestmark = pytest.mark.anyio


class Calls:
    """Counts the filesystem syncs and the per-file fdatasyncs, optionally failing them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.syncfs: list[int] = []
        self.files: list[int] = []
        self.syncfs_fails = False
        self.doomed_inode: int | None = None
        real_syncfs, real_sync_one = syncing.syncfs, syncing._sync_one

        def syncfs(fd: int) -> None:
            self.syncfs.append(fd)
            if self.syncfs_fails:
                raise OSError(5, "Input/output error")
            real_syncfs(fd)

        def sync_one(fd: int) -> Exception | None:
            self.files.append(fd)
            if os.fstat(fd).st_ino == self.doomed_inode:
                return OSError(5, "Input/output error")
            return real_sync_one(fd)

        monkeypatch.setattr(syncing, "syncfs", syncfs)
        monkeypatch.setattr(syncing, "_sync_one", sync_one)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Counted syncs, on a filesystem where one syncfs stands for every fdatasync (the
    test machine's may be one where it does not: the real `syncfs` still runs)."""
    monkeypatch.setattr(syncing, "syncfs_reports_errors", lambda fd: True)
    return Calls(monkeypatch)


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[JsonlBackend]:
    backend = JsonlBackend(tmp_path)
    yield backend
    await backend.aclose()


@pytest.fixture
def opened_fds() -> Iterator[list[int]]:
    fds: list[int] = []
    yield fds
    for fd in fds:
        os.close(fd)


def file_at(path: Path, fds: list[int], *, device: int | None = None) -> tuple[int, int]:
    """A new written file at `path`: (descriptor, its device, or `device`)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
    fds.append(fd)
    os.write(fd, b"{}\n")
    return fd, os.fstat(fd).st_dev if device is None else device


# -- through the backend ---------------------------------------------------------


async def test_a_round_of_many_sessions_is_made_durable_by_one_syncfs(
    backend: JsonlBackend, tmp_path: Path, calls: Calls
) -> None:
    ids = list(await stored_sessions(backend, tmp_path, 6))
    assert await concurrent_appends(backend, ids) == {}

    assert len(calls.syncfs) == 1  # the six shared one round
    assert calls.files == []
    for session_id in ids:
        assert await backend.read(session_id) == events(0, 2)
    await backend.aclose()
    assert backend._files._syncers._fd is None  # the descriptor ends with the backend


async def test_a_failed_syncfs_leaves_it_to_each_files_fdatasync_to_name_the_failed_append(
    backend: JsonlBackend,
    tmp_path: Path,
    calls: Calls,
    caplog: pytest.LogCaptureFixture,
) -> None:
    sizes = await stored_sessions(backend, tmp_path, 6)
    ids = list(sizes)
    calls.syncfs_fails = True
    calls.doomed_inode = log_path(tmp_path, "s3").stat().st_ino

    with caplog.at_level(logging.WARNING, "dsh.persistence.jsonl"):
        failures = await concurrent_appends(backend, ids)

    assert len(calls.syncfs) == 1 and len(calls.files) == 6
    assert list(failures) == ["s3"]
    assert isinstance(failures["s3"], StorageError)
    assert "Input/output error" in str(failures["s3"])
    assert log_path(tmp_path, "s3").stat().st_size == sizes["s3"]  # cut back
    for session_id in set(ids) - {"s3"}:
        assert await backend.read(session_id) == events(0, 2)
    assert "syncing the filesystem of" in caplog.text
    assert "each file's own fdatasync says which append it was" in caplog.text


async def test_a_round_of_few_sessions_never_syncs_the_filesystem(
    backend: JsonlBackend, tmp_path: Path, calls: Calls
) -> None:
    ids = list(await stored_sessions(backend, tmp_path, 3))
    assert await concurrent_appends(backend, ids) == {}

    assert calls.syncfs == [] and len(calls.files) == 3
    assert backend._files._syncers._fd is None  # not even opened


async def test_syncfs_turned_off_keeps_each_files_fdatasync(tmp_path: Path, calls: Calls) -> None:
    backend = JsonlBackend(tmp_path, syncfs=False)
    try:
        ids = list(await stored_sessions(backend, tmp_path, 6))
        assert await concurrent_appends(backend, ids) == {}

        assert calls.syncfs == [] and len(calls.files) == 6
        for session_id in ids:
            assert await backend.read(session_id) == events(0, 2)
    finally:
        await backend.aclose()


# -- the rules, one round at a time ------------------------------------------------


def test_a_file_on_another_device_sends_the_round_to_each_fdatasync(
    tmp_path: Path, calls: Calls, opened_fds: list[int]
) -> None:
    syncer = RoundSync(tmp_path)
    syncer.prepare(4)
    files = [file_at(tmp_path / f"f{index}", opened_fds) for index in range(3)]
    elsewhere = file_at(tmp_path / "f3", opened_fds, device=files[0][1] + 1)
    try:
        assert syncer.sync_all([*files, elsewhere]) == [None] * 4
        assert calls.syncfs == [] and len(calls.files) == 4
        assert syncer.sync_all([*files, files[0]]) == [None] * 4  # all on its device
        assert len(calls.syncfs) == 1 and len(calls.files) == 4
        threads = syncer.threads
        assert syncer.sync_all([elsewhere, *files]) == [None] * 4
        assert syncer.threads is threads and len(calls.files) == 8  # the same threads
    finally:
        syncer.close()


def test_the_descriptor_is_opened_before_the_rounds_writes_and_again_after_close(
    tmp_path: Path, calls: Calls, opened_fds: list[int]
) -> None:
    syncer = RoundSync(tmp_path)
    files = [file_at(tmp_path / f"f{index}", opened_fds) for index in range(4)]
    assert syncer.sync_all(files) == [None] * 4  # no prepare: not opened, not used
    assert calls.syncfs == []
    syncer.prepare(4)
    first = syncer._fd
    syncer.prepare(4)
    assert syncer._fd == first  # opened once
    syncer.close()
    assert syncer._fd is None and syncer.threads is None
    syncer.prepare(4)
    assert syncer.sync_all(files) == [None] * 4
    assert len(calls.syncfs) == 1
    syncer.close()
    syncer.close()  # twice is harmless


def test_a_directory_that_cannot_be_opened_leaves_the_round_to_each_fdatasync(
    tmp_path: Path, calls: Calls, opened_fds: list[int], caplog: pytest.LogCaptureFixture
) -> None:
    syncer = RoundSync(tmp_path / "missing")
    files = [file_at(tmp_path / f"f{index}", opened_fds) for index in range(4)]
    with caplog.at_level(logging.WARNING, "dsh.persistence.jsonl"):
        syncer.prepare(4)
    try:
        assert f"cannot open {tmp_path / 'missing'} to sync its filesystem" in caplog.text
        assert syncer.sync_all(files) == [None] * 4
        assert calls.syncfs == [] and len(calls.files) == 4
    finally:
        syncer.close()


def test_a_filesystem_where_syncfs_may_not_stand_for_fdatasync_is_never_synced_whole(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened_fds: list[int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = Calls(monkeypatch)
    monkeypatch.setattr(syncing, "syncfs_reports_errors", lambda fd: False)
    syncer = RoundSync(tmp_path)
    with caplog.at_level(logging.INFO, "dsh.persistence.jsonl"):
        syncer.prepare(4)
    try:
        assert "are made durable by each file's fdatasync" in caplog.text
        files = [file_at(tmp_path / f"f{index}", opened_fds) for index in range(4)]
        assert syncer.sync_all(files) == [None] * 4
        assert calls.syncfs == [] and len(calls.files) == 4
    finally:
        syncer.close()


# -- where syncfs may stand for every fdatasync -------------------------------------


@pytest.mark.parametrize(
    ("release", "reports"),
    [
        ("6.18.44-fc-v1272", True),
        ("5.8.0", True),
        ("5.10.0-28-amd64", True),
        ("10.0", True),
        ("5.7.19", False),
        ("4.19.0-26-amd64", False),
        ("", False),
        ("unknown", False),
    ],
)
def test_only_a_kernel_from_5_8_on_reports_writeback_errors_to_syncfs(
    release: str, reports: bool
) -> None:
    assert syncing.kernel_reports_syncfs_errors(release) is reports


@pytest.mark.skipif(platform.system() != "Linux", reason="syncfs and fstatfs are Linux's")
def test_the_filesystem_is_known_by_its_type_on_linux(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = syncing.filesystem_type(fd)
        assert isinstance(found, int) and found > 0
        known = found in syncing.SYNCFS_FILESYSTEMS
        reports = syncing.kernel_reports_syncfs_errors(platform.release())
        assert syncing.syncfs_reports_errors(fd) is (reports and known)
        syncing.syncfs(fd)  # a real one: returns once the filesystem is durable
    finally:
        os.close(fd)
    assert syncing.filesystem_type(fd) is None  # closed now
    with pytest.raises(OSError, match="Bad file descriptor"):
        syncing.syncfs(fd)


def test_without_the_c_librarys_functions_nothing_is_synced_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert syncing._libc_function("dsh_no_such_function") is None
    monkeypatch.setattr(syncing, "_syncfs", None)
    monkeypatch.setattr(syncing, "_fstatfs", None)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert syncing.filesystem_type(fd) is None
        assert syncing.syncfs_reports_errors(fd) is False
        with pytest.raises(OSError, match="syncfs is not available here"):
            syncing.syncfs(fd)
    finally:
        os.close(fd)
