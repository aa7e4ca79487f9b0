from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from dsh.persistence.jsonl import DataDirLock, JsonlBackend
from dsh.testing import FakeClock
from dsh.wake import JsonlWakeBackend, WakeEntry

from ..fixtures.distributions import FakeSite
from ..wake.alarm_plugin import set_alarm
from ..wake.support import alarm_host
from .conftest import Cli

ALARM = "tests.host.wake.alarm_plugin:AlarmPlugin"


def overlay(tmp_path: Path, *, wake: bool = True) -> Path:
    path = tmp_path / "overlay.toml"
    host = "[host]\nwake_cold_sessions = true\n" if wake else ""
    path.write_text(f"{host}[plugins.alarm]\n", encoding="utf-8")
    return path


def stored_sessions(data: Path, alarms: list[int | None]) -> list[str]:
    """Sessions stored in `data`, each with an alarm at the given offset (ms) or none."""
    ids: list[str] = []

    async def main() -> None:
        clock = FakeClock()
        async with alarm_host(clock, backend=JsonlBackend(data)) as host:
            for offset in alarms:
                agent = await host.create_session()
                if offset is not None:
                    set_alarm(agent, 1_800_000_000_000 + offset)
                ids.append(agent.session.id)

    anyio.run(main)
    return ids


@pytest.fixture
def alarm_site(site: FakeSite) -> FakeSite:
    site.install("dsh-alarm", {"alarm": ALARM})
    return site


def test_rebuild_writes_every_sessions_wake_time_from_the_logs(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    first, second, _plain = stored_sessions(data, [5_000, 1_000, None])

    result = dsh("index", "rebuild", "--overlay", str(overlay(tmp_path)), "--data-dir", str(data))

    assert result.code == 0, result.err
    assert result.out == (
        f"rebuilt the wake index {data / 'wake-index.jsonl'} from 3 stored Sessions: "
        "2 with a wake time, the next at 2027-01-15T08:00:01.000Z\n"
        "rebuilt the search index from 3 stored Sessions\n"
    )
    loaded = anyio.run(JsonlWakeBackend(data).load)
    assert loaded.entries == {
        first: WakeEntry(1_800_000_005_000),
        second: WakeEntry(1_800_000_001_000),
    }


def test_rebuild_replaces_a_corrupt_index_and_names_a_log_it_cannot_list(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    good, bad = stored_sessions(data, [7, 8])
    (data / "wake-index.jsonl").write_text("garbage\n", encoding="utf-8")
    log = data / "sessions" / f"{bad}.jsonl"
    header, event = log.read_text(encoding="utf-8").splitlines()
    log.write_text(f"{header}\n{{not json\n{event}\n", encoding="utf-8")  # a corrupt middle line
    for sidecar in (data / "sessions").glob(".*.idx"):
        sidecar.unlink()

    result = dsh("index", "rebuild", "--overlay", str(overlay(tmp_path)), "--data-dir", str(data))

    assert result.code == 0, result.err
    # The listing skips a log it cannot read, and says so (like `dsh sessions list`).
    assert f"dsh: warning: skipping {log} in the session list: {log}: line 2" in result.err
    assert "from 1 stored Session: 1 with a wake time" in result.out
    lines = [json.loads(line) for line in (data / "wake-index.jsonl").read_text().splitlines()]
    assert lines == [
        {"format": "dsh-wake-index", "version": 1},
        {"id": good, "wakeAt": 1_800_000_000_007, "dirty": False},
    ]


def test_rebuild_of_an_empty_store_writes_an_empty_index(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path
) -> None:
    data = tmp_path / "empty"
    result = dsh("index", "rebuild", "--overlay", str(overlay(tmp_path)), "--data-dir", str(data))
    assert result.code == 0, result.err
    assert "from 0 stored Sessions: 0 with a wake time\n" in result.out
    assert anyio.run(JsonlWakeBackend(data).load).entries == {}


def test_rebuild_refuses_while_a_dsh_web_holds_the_data_dir(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    with DataDirLock(data):
        result = dsh(
            "index", "rebuild", "--overlay", str(overlay(tmp_path)), "--data-dir", str(data)
        )
    assert result.code == 1
    assert "is in use by another dsh web (PID " in result.err
    assert "stop it before rebuilding the wake index" in result.err
    assert not (data / "wake-index.jsonl").exists()


@pytest.mark.parametrize("with_overlay", [True, False])
def test_rebuild_needs_an_overlay_that_wakes_cold_sessions(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path, with_overlay: bool
) -> None:
    args = ["--overlay", str(overlay(tmp_path, wake=False))] if with_overlay else []
    result = dsh("index", "rebuild", *args, "--data-dir", str(tmp_path / "data"))
    assert result.code == 1
    assert "does not set [host] wake_cold_sessions = true" in result.err
    assert ("the overlay " if with_overlay else "no overlay (the default tree)") in result.err


def test_rebuild_with_a_plugin_that_is_not_installed_fails_naming_it(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    result = dsh(
        "index", "rebuild", "--overlay", str(overlay(tmp_path)), "--data-dir", str(tmp_path / "d")
    )
    assert result.code == 1
    assert "dsh-alarm" in result.err


def test_rebuild_needs_an_action(dsh: Cli) -> None:
    result = dsh("index")
    assert result.code == 2
    assert "ACTION" in result.err


def test_rebuild_of_a_memory_store_takes_no_lock_and_keeps_nothing(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path
) -> None:
    result = dsh("index", "rebuild", "--overlay", str(overlay(tmp_path)), "--store", "memory:")
    assert result.code == 0, result.err
    assert result.out.startswith("rebuilt the in-memory wake index from 0 stored Sessions")


def test_rebuild_that_cannot_write_the_index_fails_naming_it(
    dsh: Cli, alarm_site: FakeSite, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    stored_sessions(data, [1])
    (data / "wake-index.jsonl").mkdir()  # a directory where the file goes
    result = dsh("index", "rebuild", "--overlay", str(overlay(tmp_path)), "--data-dir", str(data))
    assert result.code == 1
    assert f"cannot write {data / 'wake-index.jsonl'}" in result.err
