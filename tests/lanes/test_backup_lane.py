"""Backups that restore (issue 38, item 5): README "Back up and restore", done as written.

A `dsh web` runs with Sessions and a pending reminder; a backup is taken
while it runs — for JSONL the files in the README's order, for PostgreSQL
`pg_dump` — and restored into a fresh place; a fresh `dsh web` there lists
every Session and delivers the reminder, once.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.lanes.observe import changes, iso_ms
from tests.lanes.test_postgres_lane import created_reminder, remind_script, wake_overlay
from tests.support.postgres import PostgresServer
from tests.support.webhost import WebHost, wait_for

pytestmark = [pytest.mark.lane, pytest.mark.process]

DUE_IN = 20  # seconds: after the backup, its restore and the fresh host's start
SESSIONS = 3


def with_a_pending_reminder(web: WebHost) -> tuple[set[str], str, dict[str, Any]]:
    """Some Sessions, one of which set a reminder: (every id, that id, its record)."""
    ids = {web.create_session() for _ in range(SESSIONS - 1)}
    reminded = web.create_session()
    assert web.post(f"/api/sessions/{reminded}/messages", {"text": "remind"}).status_code == 202
    record = wait_for(lambda: created_reminder(web, reminded), what="the reminder")
    return ids | {reminded}, reminded, record


def restored_and_delivered(
    restored: WebHost, ids: set[str], reminded: str, record: dict[str, Any]
) -> None:
    listed = {row["id"] for row in restored.get("/api/sessions").json()["sessions"]}
    assert ids <= listed
    state = restored.get(f"/api/sessions/{reminded}").json()["plugins"]["tool-schedule"]
    assert [item["id"] for item in state["reminders"]] == [record["id"]]  # still pending

    def delivered() -> list[dict[str, Any]] | None:
        return changes(restored.all_events(reminded)["events"], "dispatch") or None

    (dispatch,) = wait_for(delivered, timeout=DUE_IN + 60, interval=0.1, what="the delivery")
    assert dispatch["time"] >= iso_ms(record["nextAt"])
    wait_for(
        lambda: any(e["type"] == "turn/end" for e in restored.all_events(reminded)["events"][-3:]),
        what="the reminder's turn",
    )
    assert len(changes(restored.all_events(reminded)["events"], "dispatch")) == 1


def back_up_a_running_data_dir(data_dir: Path, backup: Path) -> None:
    """README "Back up and restore", JSONL: the order that keeps every piece consistent."""
    backup.mkdir()
    if (data_dir / "attention.jsonl").exists():
        shutil.copy2(data_dir / "attention.jsonl", backup)  # 1. before the logs it points into
    shutil.copytree(  # 2. the logs (a torn last line is ignored when read)
        data_dir / "sessions", backup / "sessions", ignore=shutil.ignore_patterns(".*")
    )
    if (data_dir / "trash").exists():  # 3. after the logs: a delete moves a log there
        shutil.copytree(data_dir / "trash", backup / "trash", ignore=shutil.ignore_patterns(".*"))
    # Not copied: wake-index.jsonl (rebuilt from the logs), the lock, the line indexes.


def test_a_data_dir_copied_while_its_host_runs_restores_into_a_fresh_host(
    tmp_path: Path,
) -> None:
    overlay = wake_overlay(tmp_path)
    model = remind_script(tmp_path, "stretch", DUE_IN)
    with WebHost.start(tmp_path / "live", overlay=overlay, model=model) as web:
        ids, reminded, record = with_a_pending_reminder(web)
        back_up_a_running_data_dir(tmp_path / "live", tmp_path / "backup")
    with WebHost.start(tmp_path / "backup", overlay=overlay) as restored:
        restored_and_delivered(restored, ids, reminded, record)


@pytest.mark.pg
def test_a_pg_dump_taken_while_a_host_runs_restores_into_a_fresh_database(
    tmp_path: Path, pg_url: str, postgres: PostgresServer
) -> None:
    overlay = wake_overlay(tmp_path)
    model = remind_script(tmp_path, "drink water", DUE_IN)
    schema = pg_url.rsplit("schema=", 1)[1]
    dump = postgres.root / f"{schema}.dump"
    with WebHost.start(
        tmp_path / "live", overlay=overlay, model=model, extra_args=["--store", pg_url]
    ) as web:
        ids, reminded, record = with_a_pending_reminder(web)
        postgres.run("pg_dump", "-Fc", "-n", schema, "-f", dump, "-d", postgres.url)
    database = f"restored_{schema}"
    postgres.psql(f"CREATE DATABASE {database}", database="postgres")
    postgres.run("pg_restore", "-d", postgres.admin_url(database), dump)
    restored_url = pg_url.replace("@/dsh?", f"@/{database}?", 1)
    with WebHost.start(
        tmp_path / "fresh", overlay=overlay, extra_args=["--store", restored_url]
    ) as restored:
        restored_and_delivered(restored, ids, reminded, record)
