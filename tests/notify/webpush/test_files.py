"""`write_private`: all or nothing, 0600, no temporary file left on failure."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from dsh_notify.webpush.files import write_private


def test_a_write_replaces_the_file_whole_and_privately(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_private(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert os.listdir(tmp_path) == ["f.json"]


def test_a_failed_rename_keeps_the_old_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.mkdir()
    (path / "inside").touch()
    with pytest.raises(OSError):
        write_private(path, b"new")
    assert sorted(os.listdir(tmp_path)) == ["f.json"]
    assert os.listdir(path) == ["inside"]
