"""Moving a data dir to PostgreSQL and back with `dsh store copy` (issue 38, item 3).

Real processes both ways: a `dsh web` with the wake overlay sets reminders
and stops; `dsh store copy` is SIGKILLed in the middle of the copy (the
store holds a few hundred more Sessions, so there is a middle) and run
again, which completes it with nothing duplicated and a third run changes
nothing; a `dsh web` on the other store then delivers every reminder, once.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.persistence.backend import Backend
from dsh.persistence.backends import choose_backend
from tests.host.persistence.contract import events, header
from tests.lanes.observe import changes, iso_ms
from tests.lanes.test_postgres_lane import created_reminder, wake_overlay
from tests.support.webhost import REPO, WebHost, wait_for

pytestmark = [pytest.mark.lane, pytest.mark.pg, pytest.mark.process]

# Sessions beside the reminders': a copy long enough to be killed midway, with seconds to
# spare after its first tenth even while this process waits for a CPU on a loaded machine.
FILLER = 600
DUE_IN = 45  # seconds: after the stop, a killed copy, its resume and the other host's start
REMINDERS = 2
_PROGRESS = re.compile(r"sessions: (\d+)/(\d+)")


def on_store(url: str, operation: Callable[[Backend], Any]) -> Any:
    async def run() -> Any:
        backend = choose_backend(url, Path("/nonexistent"), environ={}).open()
        try:
            await backend.prepare()
            return await operation(backend)
        finally:
            await backend.aclose()

    return anyio.run(run)


def fill(url: str) -> None:
    async def write(backend: Backend) -> None:
        for number in range(FILLER):
            await backend.initialize(header(f"filler-{number:04d}"), events(0, 20))

    on_store(url, write)


def contents(url: str) -> dict[str, list[bytes]]:
    async def read(backend: Backend) -> dict[str, list[bytes]]:
        found = {}
        for summary in await backend.list():
            stored = await backend.inspect(summary.id)
            assert stored is not None
            found[summary.id] = [event.to_bytes() for event in stored.events]
        return found

    result: dict[str, list[bytes]] = on_store(url, read)
    return result


def copy(source: str, target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dsh.cli", "store", "copy", source, target],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


def killed_copy(source: str, target: str) -> str:
    """Start a copy and SIGKILL it once its progress shows it inside the Sessions; its stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dsh.cli", "store", "copy", source, target],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert process.stderr is not None
    seen = []
    with process.stderr:
        for line in process.stderr:
            seen.append(line)
            found = _PROGRESS.match(line)
            if found and 0 < int(found.group(1)) < int(found.group(2)):
                process.send_signal(signal.SIGKILL)
                break
    assert process.wait(timeout=30) == -signal.SIGKILL, "".join(seen)
    return "".join(seen)


def remind_script(tmp_path: Path, prompt: str, seconds: int) -> str:
    """A scripted model whose every pair of replies (one turn) sets one reminder."""
    arguments = {"prompt": prompt, "after_seconds": seconds}
    turn = [
        {"toolCalls": [{"name": "schedule_create", "arguments": arguments}]},
        {"text": f"Set: {prompt}."},
    ]
    script = tmp_path / "remind.json"
    script.write_text(json.dumps(turn * REMINDERS), encoding="utf-8")
    return f"scripted:{script}"


def set_reminders(web: WebHost) -> dict[str, dict[str, Any]]:
    """`REMINDERS` Sessions, each with a reminder its first turn set; by Session id."""
    made = {}
    for _ in range(REMINDERS):
        session_id = web.create_session()
        posted = web.post(f"/api/sessions/{session_id}/messages", {"text": "remind me"})
        assert posted.status_code == 202, posted.text
        made[session_id] = wait_for(
            lambda session_id=session_id: created_reminder(web, session_id),
            timeout=60,
            what="a reminder",
        )
    return made


def move_and_deliver(
    tmp_path: Path, source: WebHost, source_url: str, target: WebHost, target_url: str
) -> None:
    fill(source_url)
    source.boot()
    reminders = set_reminders(source)
    # Its Sessions go cold and their wake entries are written. A stop that hangs (seen twice
    # in CI under full load, never reproduced alone) is killed instead and its output shown:
    # what this lane checks — the copy, and one delivery on the other store — must hold
    # after a kill too (a killed host's Sessions are dirty entries, derived again).
    try:
        assert source.terminate(timeout=60) == 0
    except subprocess.TimeoutExpired:
        source.kill()
        logging.getLogger(__name__).warning(
            "dsh web did not stop on SIGTERM within 60 s:\n%s", "".join(source.output)
        )
    before = contents(source_url)
    assert len(before) == FILLER + REMINDERS

    said = killed_copy(source_url, target_url)
    assert "sessions: 0/" in said
    partial = contents(target_url)
    assert 0 < len(partial) < len(before)  # killed in the middle
    assert all(before[sid][: len(log)] == log for sid, log in partial.items())
    resumed = copy(source_url, target_url)
    assert resumed.returncode == 0, resumed.stderr
    assert contents(target_url) == before  # complete, nothing twice
    again = copy(source_url, target_url)
    assert again.returncode == 0 and "nothing copied" in again.stdout, again.stdout

    target.boot()
    for session_id, record in reminders.items():

        def delivered(session_id: str = session_id) -> list[dict[str, Any]] | None:
            found = changes(target.all_events(session_id)["events"], "dispatch")
            return found or None

        (dispatch,) = wait_for(delivered, timeout=DUE_IN + 60, interval=0.1, what="delivery")
        assert dispatch["data"]["id"] == record["id"]
        assert dispatch["time"] >= iso_ms(record["nextAt"])
        wait_for(
            lambda session_id=session_id: any(
                e["type"] == "turn/end" for e in target.all_events(session_id)["events"][-3:]
            ),
            timeout=30,
            what="the reminder's turn",
        )
        assert len(changes(target.all_events(session_id)["events"], "dispatch")) == 1
    # Nothing was delivered where the Sessions came from.
    assert all(not changes_of(source_url, sid) for sid in reminders)


def changes_of(url: str, session_id: str) -> list[Any]:
    async def read(backend: Backend) -> list[Any]:
        stored = await backend.inspect(session_id)
        assert stored is not None
        return [
            event
            for event in stored.events
            if event.type == "schedule/change" and event.to_json().count('"dispatch"')
        ]

    found: list[Any] = on_store(url, read)
    return found


def moved(tmp_path: Path, pg_url: str, *, to_postgresql: bool, prompt: str) -> None:
    """A host on one store sets reminders; the store is copied to the other kind; a host
    there delivers them once (`move_and_deliver`)."""
    overlay = wake_overlay(tmp_path)
    jsonl = f"jsonl:{tmp_path / 'jsonl'}"
    on_jsonl = {"data_dir": tmp_path / "jsonl", "overlay": overlay}
    on_pg = {"data_dir": tmp_path / "web", "overlay": overlay, "extra_args": ["--store", pg_url]}
    model = remind_script(tmp_path, prompt, DUE_IN)
    source = WebHost(**(on_jsonl if to_postgresql else on_pg), model=model)
    target = WebHost(**(on_pg if to_postgresql else on_jsonl))
    source_url, target_url = (jsonl, pg_url) if to_postgresql else (pg_url, jsonl)
    try:
        move_and_deliver(tmp_path, source, source_url, target, target_url)
    finally:
        source.stop()
        target.stop()


def test_a_data_dir_moved_to_postgresql_delivers_its_reminders_there_once(
    tmp_path: Path, pg_url: str
) -> None:
    moved(tmp_path, pg_url, to_postgresql=True, prompt="stretch")


def test_a_postgresql_store_moved_to_a_data_dir_delivers_its_reminders_there_once(
    tmp_path: Path, pg_url: str
) -> None:
    moved(tmp_path, pg_url, to_postgresql=False, prompt="drink water")
