"""`DataDirLock`: one writing process per data directory (DESIGN §4)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dsh.persistence import DataDirLock
from dsh.persistence.errors import DataDirBusy, StorageError


def test_the_lock_is_exclusive_and_names_its_holder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with DataDirLock(data) as first:
        assert first.held
        assert (data / "lock").read_text() == f"{os.getpid()}\n"
        assert stat.S_IMODE((data / "lock").stat().st_mode) == 0o600
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        with pytest.raises(DataDirBusy) as info:
            DataDirLock(data).acquire()  # another open file description: refused
        assert info.value.pid == os.getpid()
        assert str(info.value) == (
            f"the data dir {data} is in use by another dsh web (PID {os.getpid()})"
        )
        first.acquire()  # holding it already is fine
    assert not first.held
    assert (data / "lock").read_text() == ""
    with DataDirLock(data):
        pass  # released: free again


def test_a_lock_left_by_a_killed_process_does_not_block(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code = (
        "import os, sys; from dsh.persistence import DataDirLock; "
        f"DataDirLock({str(data)!r}).acquire(); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    assert (data / "lock").read_text().strip().isdigit()  # its PID is still written there
    with DataDirLock(data) as lock:
        assert lock.held


def test_a_holder_that_has_not_written_its_pid_yet_is_reported_as_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.persistence.jsonl import lock as lock_module

    monkeypatch.setattr(lock_module, "_PID_PATIENCE", 0.0)
    with DataDirLock(tmp_path):
        (tmp_path / "lock").write_text("")
        with pytest.raises(DataDirBusy, match=r"\(PID unknown\)"):
            DataDirLock(tmp_path).acquire()


def test_a_data_dir_that_cannot_hold_a_lock_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StorageError, match=r"the data dir .* is not a directory"):
        DataDirLock(blocker).acquire()
