"""What the data dir remembers about `dsh web`: `web.json` while it runs, `overlay.path` after."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dsh.web.running import (
    OVERLAY_FILE,
    WEB_FILE,
    forget_run,
    pid_alive,
    remember_overlay,
    remember_run,
    remembered_overlay,
    running_web,
)


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_run_is_remembered_without_the_token_in_files_only_we_can_read(tmp_path: Path) -> None:
    overlay = tmp_path / "overlays" / "overlay.toml"

    remember_run(tmp_path, "http://127.0.0.1:8765/", overlay)

    data = json.loads((tmp_path / WEB_FILE).read_text(encoding="utf-8"))
    assert data["url"] == "http://127.0.0.1:8765/"
    assert (data["pid"], data["overlay"]) == (os.getpid(), str(overlay))
    assert data["startedAt"].endswith("Z")
    assert set(data) == {"url", "pid", "overlay", "startedAt"}
    for name in (WEB_FILE, OVERLAY_FILE):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600
    assert running_web(tmp_path) is not None
    assert remembered_overlay(tmp_path) == overlay
    assert [path.name for path in tmp_path.glob(".*.tmp")] == []


def test_a_relative_overlay_is_remembered_as_an_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    remember_run(tmp_path, "http://127.0.0.1:1/", Path("overlays/x/overlay.toml"))
    assert remembered_overlay(tmp_path) == tmp_path / "overlays" / "x" / "overlay.toml"


def test_a_run_without_an_overlay_forgets_the_one_before(tmp_path: Path) -> None:
    remember_run(tmp_path, "http://127.0.0.1:1/", tmp_path / "overlay.toml")
    remember_run(tmp_path, "http://127.0.0.1:1/", None)
    remember_overlay(tmp_path, None)  # nothing to remove: still fine

    assert json.loads((tmp_path / WEB_FILE).read_text(encoding="utf-8"))["overlay"] is None
    assert not (tmp_path / OVERLAY_FILE).exists()
    assert remembered_overlay(tmp_path) is None


def test_a_clean_stop_removes_web_json_and_keeps_the_overlay(tmp_path: Path) -> None:
    remember_run(tmp_path, "http://127.0.0.1:1/", tmp_path / "overlay.toml")

    forget_run(tmp_path)
    forget_run(tmp_path)  # already gone: nothing to do

    assert not (tmp_path / WEB_FILE).exists()
    assert running_web(tmp_path) is None
    assert remembered_overlay(tmp_path) == tmp_path / "overlay.toml"


def test_another_process_s_web_json_is_not_removed(tmp_path: Path) -> None:
    remember_run(tmp_path, "http://127.0.0.1:1/", None, pid=os.getppid())
    forget_run(tmp_path)
    assert (tmp_path / WEB_FILE).exists()


def test_a_web_json_whose_process_is_gone_is_stale(tmp_path: Path) -> None:
    remember_run(tmp_path, "http://127.0.0.1:1/", None, pid=dead_pid())
    assert running_web(tmp_path) is None


@pytest.mark.parametrize(
    "text",
    ["", "{", '{"url": "x", "pid": 0, "overlay": null, "startedAt": "t"}', "[]", "x" * 70_000],
    ids=["empty", "broken", "no pid", "not an object", "too long"],
)
def test_a_malformed_web_json_is_no_running_host(tmp_path: Path, text: str) -> None:
    path = tmp_path / WEB_FILE
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    assert running_web(tmp_path) is None


def test_a_file_others_could_write_or_a_symlink_is_not_trusted(tmp_path: Path) -> None:
    remember_run(tmp_path, "http://127.0.0.1:1/", tmp_path / "overlay.toml")
    (tmp_path / WEB_FILE).chmod(0o622)
    (tmp_path / OVERLAY_FILE).rename(tmp_path / "elsewhere")
    (tmp_path / OVERLAY_FILE).symlink_to(tmp_path / "elsewhere")

    assert running_web(tmp_path) is None
    assert remembered_overlay(tmp_path) is None


@pytest.mark.parametrize("text", ["relative/overlay.toml", "/a\n/b", "   "])
def test_an_overlay_path_that_is_not_one_absolute_path_is_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / OVERLAY_FILE
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    assert remembered_overlay(tmp_path) is None


def test_pids_alive_dead_foreign_and_impossible() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())
    assert pid_alive(1) or os.geteuid() != 0  # init: alive (ours to signal as root)
    assert not pid_alive(2**64)


def test_pid_alive_counts_a_process_we_may_not_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid: int, signal: int) -> None:
        raise PermissionError

    monkeypatch.setattr(os, "kill", refuse)
    assert pid_alive(12345)
