"""SIGKILL around wakes: no acknowledged alarm is lost, none is delivered twice once stored.

A child process (`crash_child.py`) runs a real Host with the wake index on
one data directory and does random work while hibernation closes idle
Sessions and the index wakes them for their alarms. The test kills it with
SIGKILL at random moments — some right after a Session was woken — and
restarts it, sometimes after deleting the index file or leaving half a
line at its end. Finally a Host on the same directory runs with nobody
touching any Session: every alarm whose creation was acknowledged must ring
(each woken by the index, or by the index rebuilt from the logs), and the
stored logs must hold exactly one `alarm/rang` per alarm.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import anyio
import pytest

from dsh.host.host import Host
from dsh.persistence.jsonl import JsonlBackend
from dsh.testing import FakeModel
from dsh.wake import JsonlWakeBackend

from .alarm_plugin import RANG, SET, AlarmPlugin

pytestmark = [pytest.mark.crash]

ROUNDS = 8
REPO = Path(__file__).resolve().parents[3]


class Child:
    def __init__(self, data: Path, seed: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.host.wake.crash_child", str(data), str(seed)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self.ready = threading.Event()  # READY printed, or the child's output ended
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.lines.append(line.rstrip("\n"))
                if line.startswith("READY"):
                    self.ready.set()
        self.ready.set()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self.reader.join(timeout=10)

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until the child's Host runs (a loaded machine can take seconds to import it)."""
        self.ready.wait(timeout)
        assert "READY" in self.lines, "\n".join(["the child never started:", *self.lines])

    def woken(self) -> int:
        return sum(1 for line in list(self.lines) if line.startswith("LIVE "))


def stored_alarms(data: Path) -> tuple[dict[str, set[int]], dict[str, Counter[int]]]:
    """Every Session's alarms set and rung, from the logs on disk."""

    async def read() -> tuple[dict[str, set[int]], dict[str, Counter[int]]]:
        backend = JsonlBackend(data)
        set_: dict[str, set[int]] = {}
        rung: dict[str, Counter[int]] = {}
        for row in await backend.list():
            stored = await backend.inspect(row.id)
            assert stored is not None
            for event in stored.events:
                if event.type == SET:
                    set_.setdefault(row.id, set()).add(event.data["at"])  # type: ignore[index]
                elif event.type == RANG:
                    rung.setdefault(row.id, Counter())[event.data["at"]] += 1  # type: ignore[index]
        await backend.aclose()
        return set_, rung

    return anyio.run(read)


def test_sigkill_around_wakes_loses_no_alarm_and_rings_none_twice(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seed = int(os.environ.get("DSH_RELIABILITY_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    acked: set[tuple[str, int]] = set()
    kills = Counter[str]()
    for number in range(ROUNDS):
        child = Child(data, seed + number)
        child.wait_ready()
        deadline = time.monotonic() + rng.uniform(0.8, 2.5)
        at_wake = rng.random() < 0.4
        while time.monotonic() < deadline and child.process.poll() is None:
            if at_wake and child.woken() >= 2:
                break  # kill right after the index woke a Session (its delivery under way)
            time.sleep(0.005)
        assert child.process.poll() is None, "\n".join(child.lines)
        child.kill()
        kills["at-wake" if at_wake and child.woken() >= 2 else "random"] += 1
        for line in child.lines:
            if line.startswith("ACK "):
                _, session_id, at = line.split()
                acked.add((session_id, int(at)))
        assert not any("Traceback" in line for line in child.lines), "\n".join(child.lines)
        index = data / "wake-index.jsonl"
        luck = rng.random()
        if luck < 0.2 and index.exists():
            index.unlink()
            kills["index_deleted"] += 1
        elif luck < 0.35 and index.exists():
            with index.open("ab") as handle:
                handle.write(b'{"id":"torn","wakeAt":')
            kills["index_torn"] += 1
    assert acked, "the child acknowledged no alarm"

    async def final() -> None:
        host = Host(
            backend=JsonlBackend(data),
            model=FakeModel(),
            wake_backend=JsonlWakeBackend(data),
        )
        host.pm.register(AlarmPlugin(), name="alarm")
        async with host:
            for _ in range(300):  # polling the files the host writes, for at most 30 s
                if not await anyio.to_thread.run_sync(missing):
                    break
                await anyio.sleep(0.1)

    def missing() -> set[tuple[str, int]]:
        _, rung = stored_alarms(data)
        return {(session_id, at) for session_id, at in acked if at not in rung.get(session_id, ())}

    anyio.run(final)
    lost = missing()
    assert not lost, f"acknowledged alarms never rang (seed {seed}, {dict(kills)}): {lost}"
    set_, rung = stored_alarms(data)
    duplicates = {
        (session_id, at): count
        for session_id, counts in rung.items()
        for at, count in counts.items()
        if count > 1
    }
    assert not duplicates, f"rung twice after a durable ring (seed {seed}): {duplicates}"
    never = {(s, at) for s, ats in set_.items() for at in ats if at not in rung.get(s, ())}
    assert not never, f"stored alarms that never rang (seed {seed}): {never}"
    assert sum(kills.values()) >= ROUNDS
