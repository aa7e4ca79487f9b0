"""`dsh web` as a real process: one writer per data dir, a full disk, and an honest stop.

These boot the command a user types (`tests/support/webhost.py`), so every
wait is for a condition with a deadline. The full disk is a real 1 MiB tmpfs
where this machine lets the test mount one, else a simulated one
(`tests/support/fulldisk.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fulldisk import FullDisk
from tests.support.webhost import REPO, WebHost, wait_for

WRAPPER = REPO / "tests" / "reliability" / "wrapped_dsh.py"
TOKEN = "launch-token-0123456789abcdef"

pytestmark = pytest.mark.process


def second_dsh_web(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh.cli", "web", "--data-dir", str(data_dir), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={**os.environ, "DSH_TOKEN": TOKEN},
        check=False,
    )


def stored_lines(data_dir: Path, session_id: str) -> list[dict[str, object]]:
    path = data_dir / "sessions" / f"{session_id}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_second_dsh_web_on_the_same_data_dir_exits_1_naming_it_and_the_holder(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    with WebHost.start(data_dir, overlay=None, model="absent", token=TOKEN) as first:
        session_id = first.create_session()
        assert first.post(f"/api/sessions/{session_id}/messages", {"text": "hi"}).status_code == 202
        before = wait_for(
            lambda: (
                (lines := stored_lines(data_dir, session_id))[-1].get("type") == "turn/end"
                and lines
            ),
            what="the turn to be stored",
        )

        second = second_dsh_web(data_dir)

        assert first.process is not None
        assert second.returncode == 1
        assert second.stdout == ""
        assert second.stderr == (
            f"dsh: error: the data dir {data_dir} is in use by another dsh web "
            f"(PID {first.process.pid})\n"
        )
        assert stored_lines(data_dir, session_id) == before  # the second wrote nothing
        assert first.get("/api/health").status_code == 200
    # Once the first has stopped, the data dir is free again.
    with WebHost.start(data_dir, overlay=None, model="absent", token=TOKEN) as third:
        assert third.get(f"/api/sessions/{session_id}").json()["length"] == len(before) - 1


def full_disk_host(disk: FullDisk, *extra_args: str) -> WebHost:
    return WebHost(
        data_dir=disk.directory,
        overlay=None,
        model="absent",
        token=TOKEN,
        dsh=[sys.executable, str(WRAPPER)],
        extra_env={**disk.process_env(), "PYTHONPATH": str(REPO)},
        extra_args=list(extra_args),
    )


def send_until_degraded(web: WebHost, session_id: str) -> dict[str, object]:
    """Post messages until storage fails: on a real tmpfs the first appends may still
    fit in the log's last page; a few more cannot."""
    for number in range(200):
        response = web.post(f"/api/sessions/{session_id}/messages", {"text": f"hi {number}"})
        assert response.status_code == 202, response.text
        health = web.get("/api/health")
        if health.status_code == 503:
            return dict(health.json())
        wait_for(
            lambda: any(
                line.get("type") == "turn/end" for line in web.all_events(session_id)["events"][-1:]
            ),
            what="the turn to end",
        )
    raise AssertionError("storage never failed on the full disk")


def test_a_full_disk_degrades_health_and_every_event_is_stored_once_space_returns(
    tmp_path: Path,
) -> None:
    with FullDisk.open(tmp_path) as disk:
        web = full_disk_host(disk)
        web.boot()
        try:
            session_id = web.create_session()
            disk.fill()
            degraded = send_until_degraded(web, session_id)
            assert degraded["storage"] == "degraded" and degraded["sessions"] == 1
            assert degraded["error"]["code"] == "storage_degraded"
            disk.free()
            wait_for(
                lambda: web.get("/api/health").status_code == 200,
                what="the writer to store everything once space returned",
            )
            stored = stored_lines(disk.directory, session_id)[1:]
            live = web.all_events(session_id)["events"]
            assert stored == live  # every event the host holds is stored, once
            assert stored[-1]["type"] == "turn/end"
            assert web.terminate() == 0
        finally:
            web.stop()
        output = "".join(web.output)
        assert output.count("persistence write failed; retrying") == 1  # once per episode
        assert "stored again after" in output


def test_sigterm_waits_for_unconfirmed_events_then_exits_1_naming_the_sessions(
    tmp_path: Path,
) -> None:
    with FullDisk.open(tmp_path) as disk:
        web = full_disk_host(disk, "--stop-grace", "1")
        web.boot()
        try:
            kept = web.create_session()
            lost = web.create_session()
            disk.fill()
            send_until_degraded(web, lost)
            code = web.terminate()
        finally:
            web.stop()
        output = "".join(web.output)
        assert code == 1
        assert f"dsh: error: 1 session was not fully stored when dsh web stopped: {lost}" in output
        assert kept not in output.split("dsh: error:")[-1]


def test_a_session_made_and_never_used_goes_to_the_trash_when_dsh_web_stops(
    tmp_path: Path,
) -> None:
    from dsh.cli import main

    data_dir = tmp_path / "data"
    with WebHost.start(data_dir, overlay=None, model="demo", token=TOKEN) as web:
        unused = web.create_session()
        used = web.create_session()
        assert web.post(f"/api/sessions/{used}/messages", {"text": "hi"}).status_code == 202
        wait_for(
            lambda: stored_lines(data_dir, used)[-1].get("type") == "turn/end",
            what="the answer to be stored",
        )
        assert web.terminate() == 0

    assert sorted(path.name for path in (data_dir / "sessions").glob("*.jsonl")) == [
        f"{used}.jsonl"
    ]
    assert (data_dir / "trash" / f"{unused}.jsonl").is_file()
    assert main(["sessions", "restore", unused, "--data-dir", str(data_dir)]) == 0
    assert stored_lines(data_dir, unused)[1:] == []


def test_a_fresh_start_warns_of_nothing_names_its_model_and_ends_with_the_address(
    tmp_path: Path,
) -> None:
    overlay = REPO / "overlays" / "web-schedule-wake"  # with the wake index: a new one is made
    with WebHost.start(tmp_path / "data", overlay=overlay, model="demo", token=None) as web:
        assert web.get("/api/health").status_code == 200
        assert web.terminate() == 0
    lines = [line.rstrip("\n") for line in web.output]
    shutdown = next(i for i, line in enumerate(lines) if "Shutting down" in line)
    before = [line for line in lines[:shutdown] if line.strip()]

    assert before[-1].startswith("dsh web: http://127.0.0.1:")  # the line to open comes last
    assert [line for line in before if "model: " in line] == [
        "INFO dsh.web.app: model: demo (offline)"
    ]
    assert not [line for line in lines if "WARNING" in line or "ERROR" in line]


def test_the_data_dir_remembers_the_running_host_and_the_reminders_commands_use_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from dsh.cli import main

    def dsh(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    data_dir = tmp_path / "data"
    overlay = REPO / "overlays" / "web-schedule"
    monkeypatch.delenv("DSH_OVERLAY", raising=False)
    monkeypatch.delenv("DSH_TOKEN", raising=False)  # the token is read from <data-dir>/token
    monkeypatch.setenv("DSH_DATA_DIR", str(data_dir))
    with WebHost.start(data_dir, overlay=overlay, model="demo", token=None) as web:
        text = (data_dir / "web.json").read_text(encoding="utf-8")
        mode = (data_dir / "web.json").stat().st_mode & 0o777
        remembered = json.loads(text)
        session_id = web.create_session()
        added = dsh("reminders", "add", "--session", session_id, "--in", "10m", "stretch")
        snoozed = dsh("reminders", "snooze", "--session", session_id, "rem-1", "--for", "5m")
        twice = dsh("reminders", "delete", "--session", session_id, "rem-2")
        stored = web.stored_log(session_id)
        assert web.terminate() == 0

    assert remembered["url"] == web.base_url.rstrip("/") + "/"
    assert remembered["overlay"] == str(overlay / "overlay.toml")
    assert web.process is not None and remembered["pid"] == web.process.pid
    assert set(remembered) == {"url", "pid", "overlay", "startedAt"}
    assert web.printed_token and web.printed_token not in text  # never the token
    assert mode == (data_dir / "overlay.path").stat().st_mode & 0o777 == 0o600
    assert added[0] == 0 and "rem-1  stretch  once, 10 minutes after it was set" in added[1]
    assert snoozed[0] == 0 and "once, snoozed to " in snoozed[1]
    assert twice == (
        1,
        "",
        "dsh: error: rem-2 is not an active reminder of this Session (unknown, deleted or "
        "finished); nothing was changed\n",
    )
    assert [line["data"]["change"] for line in stored if line.get("type") == "schedule/change"] == [
        "create",
        "update",
    ]
    # Stopped cleanly: no web.json; the overlay is still remembered, so listing works.
    assert not (data_dir / "web.json").exists()
    listed = dsh("reminders", "list")
    assert listed[0] == 0 and "once, snoozed to " in listed[1]
    assert dsh("reminders", "pause", "--session", session_id, "rem-1") == (
        1,
        "",
        f"dsh: error: no dsh web is running on {data_dir}: start it, e.g. ./scripts/run\n",
    )
