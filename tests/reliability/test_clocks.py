"""Wall-clock jumps: a reminder never fires early and an overdue one fires exactly once.

Two levels:

- **In process**: a Host with the real plugin and the demo model on a
  `FakeClock`; a seeded random walk creates reminders, steps the wall clock
  back and forth by up to two hours (`jump_wall`, which wakes nobody, like a
  real clock step) and lets elapsed time pass. After every step, every
  dispatch was appended at a wall time at or after its target. At the end the
  wall jumps far forward: every reminder fires, each exactly once, and keeps
  firing exactly once while more time passes.
- **In a real process**: `dsh web` started through `wrapped_dsh.py`, whose
  `time.time`/`time.time_ns` follow an offset the test writes to a file, with
  an overlay that shortens the owner's sleep segments to 0.5 s. The wall
  clock is set back an hour under a reminder due in three seconds: the owner
  demonstrably wakes (its clock reads are logged) after the real target and
  does not fire; set right again, it fires once. A reminder due in an hour
  fires once, marked overdue, as soon as the wall clock jumps past it.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.host.host import Host
from dsh.models.demo import DemoModel
from dsh.persistence import MemoryBackend
from dsh.plugins.overlay import PluginSpec
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh_tool_schedule import ScheduleFold
from dsh_tool_schedule.timefmt import parse_timestamp
from tests.support.webhost import WebHost, wait_for

from .figures import Figures
from .stored import reminder_messages, schedule_changes

pytestmark = [pytest.mark.reliability]

WALK_STEPS = 120
WRAPPER = Path(__file__).with_name("wrapped_dsh.py")


def targets(session: Session) -> dict[str, int]:
    """Reminder id → target (epoch ms) of every create in the Session (v2: its `nextAt`)."""
    return {
        change["record"]["id"]: parse_timestamp(change["record"]["nextAt"])
        for _seq, change in schedule_changes(tuple(session.events))
        if change["change"] == "create"
    }


def dispatch_times(session: Session) -> list[tuple[str, int]]:
    """`(id, wall time of the append)` of every dispatch."""
    return [
        (change["id"], session.events[seq].time)
        for seq, change in schedule_changes(tuple(session.events))
        if change["change"] == "dispatch"
    ]


async def settle() -> None:
    with anyio.fail_after(10):
        for _ in range(5):
            await anyio.wait_all_tasks_blocked()


@pytest.mark.anyio
async def test_random_wall_clock_jumps_never_fire_early_and_overdue_fires_once(
    tmp_path: Path, rng: random.Random, scale: int, figures: Figures
) -> None:
    clock = FakeClock()
    counters: Counter[str] = Counter()
    async with Host(
        backend=MemoryBackend(),
        model=DemoModel(),
        plugins=[PluginSpec("tool-schedule")],
        clock=clock,
        cwd=str(tmp_path),
    ) as host:
        agents = [await host.create_session() for _ in range(2)]
        for step in range(WALK_STEPS * scale):
            roll = rng.random()
            if roll < 0.3:
                agent = rng.choice(agents)
                agent.submit(f"remind me in {rng.randint(1, 900)} seconds to walk-{step}")
                counters["reminders_created"] += 1
            elif roll < 0.6:
                clock.jump_wall(rng.uniform(-7200, 7200))
                counters["wall_jumps"] += 1
            else:
                clock.advance(rng.uniform(0, 90))
                counters["advances"] += 1
            await settle()
            for agent in agents:
                due = targets(agent.session)
                for reminder, at in dispatch_times(agent.session):
                    assert at >= due[reminder], f"{reminder} fired {due[reminder] - at} ms early"
        clock.jump_wall(3 * 86_400)
        counters["wall_jumps"] += 1
        for _ in range(4):
            clock.advance(61)
            await settle()
        for agent in agents:
            fired = Counter(reminder for reminder, _at in dispatch_times(agent.session))
            messages = Counter(rid for _seq, rid in reminder_messages(tuple(agent.session.events)))
            assert set(fired) == set(targets(agent.session)) - deleted(agent.session)
            assert all(count == 1 for count in fired.values()), fired
            assert messages == fired, (messages, fired)
            assert not ScheduleFold.of(agent.session).reminders()
            counters["dispatches"] += sum(fired.values())
    counters["early_fires"] = 0
    figures.merge("clocks", counters)


def deleted(session: Session) -> set[str]:
    return {
        change["id"]
        for _seq, change in schedule_changes(tuple(session.events))
        if change["change"] == "delete"
    }


def overlay(folder: Path) -> Path:
    path = folder / "overlay.toml"
    path.write_text(
        '[host]\nmodel = "demo"\n\n'
        "[plugins.tool-schedule]\nmax_segment_seconds = 0.5\nearly_wake_seconds = 0.0\n\n"
        "[plugins.client-ui-schedule]\n",
        "utf-8",
    )
    return path


class ClockedHost:
    """A `dsh web` process whose wall clock the test sets (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.control = root / "clock-offset"
        self.reads = root / "wall-reads.log"
        self.control.write_text("0", "utf-8")
        self.web = WebHost(
            data_dir=root / "data",
            overlay=overlay(root),
            model="demo",
            dsh=[sys.executable, str(WRAPPER)],
            extra_env={
                "DSH_TEST_CLOCK_FILE": str(self.control),
                "DSH_TEST_WALL_LOG": str(self.reads),
            },
        )

    def set_offset(self, seconds: float) -> None:
        temporary = self.control.with_suffix(".tmp")
        temporary.write_text(repr(seconds), "utf-8")
        temporary.replace(self.control)

    def wall_reads(self) -> list[tuple[int, int]]:
        """`(real ms, wall ms)` of every read of the host's wall clock so far."""
        if not self.reads.exists():
            return []
        lines = self.reads.read_text("utf-8").splitlines()
        return [(int(real), int(wall)) for real, wall in (line.split() for line in lines if line)]

    def events(self, session_id: str) -> list[dict[str, Any]]:
        return list(self.web.all_events(session_id)["events"])

    def created(self, session_id: str, prompt: str) -> tuple[str, int]:
        """Wait for the tool result creating `prompt`; return its id and target (ms)."""

        def found() -> tuple[str, int] | None:
            for event in self.events(session_id):
                value = event["data"].get("value") if event["type"] == "tool/result" else None
                if isinstance(value, dict) and value.get("prompt") == prompt:
                    return value["id"], parse_timestamp(value["nextAt"])
            return None

        return wait_for(found, what=f"the reminder {prompt!r}")

    def dispatches(self, session_id: str, reminder: str) -> list[dict[str, Any]]:
        return [
            event
            for event in self.events(session_id)
            if event["type"] == "schedule/change"
            and event["data"]["change"] == "dispatch"
            and event["data"]["id"] == reminder
        ]

    def reminder_messages(self, session_id: str, reminder: str) -> list[dict[str, Any]]:
        return [
            event
            for event in self.events(session_id)
            if event["type"] == "message/user"
            and event["data"]["source"]["kind"] == "schedule"
            and event["data"]["source"]["scheduleId"] == reminder
        ]

    def wakes_after(self, real_ms: int, count: int) -> None:
        """Wait until the owner has read the wall clock `count` times after `real_ms`."""
        wait_for(
            lambda: sum(real > real_ms for real, _wall in self.wall_reads()) >= count,
            timeout=15,
            what=f"{count} owner wakes",
        )


def test_a_real_process_never_fires_early_after_a_rollback_and_fires_once_after_a_jump(
    tmp_path: Path, figures: Figures
) -> None:
    clocked = ClockedHost(tmp_path)
    web = clocked.web
    web.boot()
    try:
        session_id = web.create_session()
        assert (
            web.post(
                f"/api/sessions/{session_id}/messages", {"text": "remind me in 3 seconds to back"}
            ).status_code
            == 202
        )
        back, back_due = clocked.created(session_id, "back")
        clocked.set_offset(-3600)
        clocked.wakes_after(back_due + 200, 3)  # woke three times past the real target
        assert clocked.dispatches(session_id, back) == [], "fired while the wall clock was behind"
        late = [wall for real, wall in clocked.wall_reads() if real > back_due]
        assert late and all(wall < back_due for wall in late)
        clocked.set_offset(0)
        wait_for(
            lambda: clocked.reminder_messages(session_id, back) or None, what="the rolled-back one"
        )
        [dispatch] = clocked.dispatches(session_id, back)
        assert dispatch["time"] >= back_due

        assert (
            web.post(
                f"/api/sessions/{session_id}/messages", {"text": "remind me in 1 hour to ahead"}
            ).status_code
            == 202
        )
        ahead, ahead_due = clocked.created(session_id, "ahead")
        assert (
            web.post(
                f"/api/sessions/{session_id}/messages", {"text": "remind me in 1 day to keepalive"}
            ).status_code
            == 202
        )
        clocked.created(session_id, "keepalive")
        clocked.set_offset(3605)
        wait_for(
            lambda: clocked.reminder_messages(session_id, ahead) or None, what="the overdue one"
        )
        [jumped] = clocked.dispatches(session_id, ahead)
        assert jumped["time"] >= ahead_due
        [message] = clocked.reminder_messages(session_id, ahead)
        assert "Status: overdue by" in message["data"]["text"]
        clocked.wakes_after(max(real for real, _ in clocked.wall_reads()), 4)
        assert len(clocked.dispatches(session_id, ahead)) == 1
        assert len(clocked.reminder_messages(session_id, ahead)) == 1
        assert len(clocked.dispatches(session_id, back)) == 1
        assert web.terminate() == 0
    finally:
        web.stop()
    section = figures.section("clocks")
    section["process_wall_jumps"] = 3
    section["process_owner_wakes_observed"] = len(clocked.wall_reads())
    section["process_early_fires"] = 0
    section["process_overdue_fired_once"] = 1
