"""Storage faults under a live workload: no false success, and convergence once they stop.

An in-process Host (real store, coordinator, JSONL files through
`FaultyBackend.jsonl`, the real schedule plugin, the demo model, a FakeClock)
runs a random workload — new Sessions, reminder requests, lists, cancels,
clock advances that make reminders fall due, close + resume cycles — while a
seeded script injects storage faults before each step: `initialize`,
`append`, `sync` (the fsync itself), `cursor` and `inspect` failures, before
or after the write took effect (`after_write=True`: a commit whose
acknowledgement was lost). A `BarrierMonitor` wraps `store.flush`: it records
every barrier's outcome, and also injects refusals (a barrier returning False,
as one with no durable acknowledgement does).

What must hold:

- every `store.flush` that returned True is backed by the file at that
  moment: events `[0, through)` are stored exactly (checked on the spot);
- every schedule tool answers as DESIGN §8 says, given the barriers it ran:
  the first barrier that raised → `persistence_uncertain`, the first that
  returned False → `persistence_unavailable`, all True → a success — never a
  success without its barriers;
- a new Session is returned (the 201 path) only once its file exists;
- once the faults stop, one clean flush per live Session makes the stored
  log equal to the live one — same length, same events, no duplicated prefix
  — every reminder still falls due and is dispatched (one the per-Session
  delivery budget deferred, once its rolling window has room), and every
  success a tool ever answered is in the final files.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.agents.agent import Agent, AgentPhase
from dsh.host.host import Host
from dsh.models.demo import DemoModel
from dsh.persistence import JsonlBackend
from dsh.plugins.overlay import PluginSpec
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from dsh.session.types import END_SEED
from dsh.testing import FakeClock, Fault, FaultyBackend
from dsh_tool_schedule import ScheduleFold

from .figures import Figures

pytestmark = [pytest.mark.reliability, pytest.mark.anyio]

STEPS = 400
DEADLINE = 20.0
FAULTS: tuple[tuple[str, float], ...] = (
    ("initialize", 1.0),
    ("append", 3.0),
    ("sync", 3.0),
    ("cursor", 1.0),
    ("inspect", 1.0),
)
SCHEDULE_TOOLS = ("schedule_create", "schedule_list", "schedule_delete")


@dataclass(frozen=True)
class FlushRecord:
    """One barrier: on which Session object, from which task, through where, and how it ended."""

    session: Session
    task: str
    through: int
    outcome: str  # "true", "false" or "raised"


class BarrierMonitor:
    """Wraps one store's `flush`: records outcomes, checks True ones, injects refusals."""

    def __init__(self, live: LiveSessions, directory: Path) -> None:
        self._flush = live.flush
        self._directory = directory
        self.records: list[FlushRecord] = []
        self.refuse_next = 0
        self.refusals_injected = 0
        self.true_checked = 0
        self.violations: list[str] = []
        live.flush = self.flush  # type: ignore[method-assign]

    async def flush(self, session: Session) -> bool:
        through = len(session)
        task = anyio.get_current_task().name or ""
        if self.refuse_next > 0:
            self.refuse_next -= 1
            self.refusals_injected += 1
            self.records.append(FlushRecord(session, task, through, "false"))
            return False
        try:
            durable = await self._flush(session)
        except Exception:
            self.records.append(FlushRecord(session, task, through, "raised"))
            raise
        self.records.append(FlushRecord(session, task, through, "true" if durable else "false"))
        if durable:
            self._check_stored(session, through)
        return durable

    def _check_stored(self, session: Session, through: int) -> None:
        path = self._directory / "sessions" / f"{session.id}.jsonl"
        lines = path.read_bytes().split(b"\n") if path.exists() else []
        stored = [line.decode() for line in lines[1 : through + 1]]
        wanted = [event.to_json() for event in session.events[:through]]
        if stored != wanted:
            self.violations.append(
                f"flush of {session.id} through {through} returned True but the file holds "
                f"{len(stored)} of those events (or different ones)"
            )
        self.true_checked += 1


def expected_answer(outcomes: list[str]) -> str:
    """What a schedule tool must answer after barriers with these outcomes (DESIGN §8)."""
    for outcome in outcomes:
        if outcome == "raised":
            return "persistence_uncertain"
        if outcome == "false":
            return "persistence_unavailable"
    return "ok"


def data(event: SessionEvent) -> dict[str, Any]:
    assert isinstance(event.data, dict)
    return event.data


class FaultWorld:
    """The Host, its faults and the random workload (see the module docstring)."""

    def __init__(
        self,
        host: Host,
        backend: FaultyBackend,
        clock: FakeClock,
        monitor: BarrierMonitor,
        rng: random.Random,
    ) -> None:
        self.host = host
        self.backend = backend
        self.clock = clock
        self.monitor = monitor
        self.rng = rng
        self.faults: list[Fault] = []
        self.lifecycles: list[Session] = []
        self.cold: list[str] = []
        self.counters: Counter[str] = Counter()
        self.serial = 0

    # -- faults -----------------------------------------------------------------

    def inject(self) -> None:
        if self.rng.random() < 0.3:
            kind = self.rng.choices([k for k, _ in FAULTS], [w for _, w in FAULTS])[0]
            after = self.rng.random() < 0.5
            times = self.rng.choice((1, 1, 2))
            self.faults.append(self.backend.fail(kind, after_write=after, times=times))  # type: ignore[arg-type]
        if self.rng.random() < 0.08:
            self.monitor.refuse_next += self.rng.choice((1, 2))

    def stop_faults(self) -> None:
        self.backend.clear()
        self.monitor.refuse_next = 0

    # -- waiting ----------------------------------------------------------------

    async def until(self, condition: Callable[[], bool], what: str) -> None:
        with anyio.fail_after(DEADLINE):
            while not condition():
                await anyio.lowlevel.checkpoint()
        assert condition(), what

    def quiet(self) -> bool:
        return all(
            agent.phase is AgentPhase.IDLE and agent.pending == 0 for agent in self.host.agents()
        )

    async def settle(self) -> None:
        for _ in range(3):
            await anyio.wait_all_tasks_blocked()
        await self.until(self.quiet, "every agent idle")

    # -- operations -------------------------------------------------------------

    async def step(self) -> None:
        self.inject()
        live = self.host.agents()
        choices: list[tuple[float, Callable[[], Any]]] = [
            (1.0 if len(live) < 5 else 0.1, self.create),
            (5.0 if live else 0.0, self.message),
            (2.0, self.advance),
            (0.7 if live else 0.0, self.cycle),
            (1.0 if self.cold else 0.0, self.resume_cold),
        ]
        operation = self.rng.choices([op for _, op in choices], [w for w, _ in choices])[0]
        await operation()
        self.counters["steps"] += 1

    async def create(self) -> None:
        try:
            agent = await self.host.create_session()
        except Exception:
            self.counters["creates_refused"] += 1
            return
        path = self.backend.inner.path_of(agent.session.id)  # type: ignore[attr-defined]
        assert path.exists(), "create_session returned before the Session's file existed"
        self.lifecycles.append(agent.session)
        self.counters["creates_acknowledged"] += 1

    def text(self) -> str:
        self.serial += 1
        roll = self.rng.random()
        if roll < 0.5:
            return f"remind me in {self.rng.randint(1, 6)} seconds to task-{self.serial}"
        if roll < 0.7:
            return "list reminders"
        if roll < 0.9:
            return f"cancel reminder rem-{self.rng.randint(1, 4)}"
        return f"hello {self.serial}"

    async def message(self) -> None:
        agent = self.rng.choice(self.host.agents())
        await self.talk(agent, self.text())

    async def talk(self, agent: Agent, text: str) -> None:
        ends = sum(1 for event in agent.session.events if event.type == "turn/end")
        agent.submit(text)
        self.counters["messages"] += 1
        await self.until(
            lambda: (
                agent.closed
                or (
                    sum(1 for event in agent.session.events if event.type == "turn/end") > ends
                    and agent.phase is AgentPhase.IDLE
                    and agent.pending == 0
                )
            ),
            f"the turn for {text!r}",
        )

    async def advance(self) -> None:
        await self.settle()
        self.clock.advance(self.rng.uniform(0.5, 4.0))
        await self.settle()
        self.counters["clock_advances"] += 1

    async def cycle(self) -> None:
        agent = self.rng.choice(self.host.agents())
        session_id = agent.session.id
        try:
            await self.host.close_session(session_id)
        except Exception:
            self.counters["closes_with_unstored_events"] += 1
        self.counters["closes"] += 1
        await self.resume(session_id)

    async def resume_cold(self) -> None:
        await self.resume(self.cold.pop(self.rng.randrange(len(self.cold))))

    async def resume(self, session_id: str) -> None:
        try:
            agent, _ = await self.host.resume(session_id)
        except Exception:
            self.counters["resumes_refused"] += 1
            self.cold.append(session_id)
            return
        self.lifecycles.append(agent.session)
        self.counters["resumes"] += 1

    # -- recovery -----------------------------------------------------------------

    async def recover(self) -> None:
        """Faults stop: resume what is cold, flush, and let every reminder fall due."""
        self.stop_faults()
        while self.cold:
            await self.resume(self.cold.pop())
        assert not self.cold, "a Session could not be resumed without faults"
        for agent in self.host.agents():
            assert await self.host.live.flush(agent.session) is True
            await self.talk(agent, "list reminders")  # a management preflight recomputes
        await self.let_time_pass(5.0, times=40)  # every reminder was set at most 6 s ahead
        # A Session that had more reminder turns than its budget allows in a rolling hour
        # (the soak's longer walk does) holds the rest back, told once with a
        # `deliveries_deferred` notice; they are delivered as the window frees, never lost.
        self.counters["budget_deferral_notices"] = sum(
            data(event).get("notice") == "deliveries_deferred"
            for agent in self.host.agents()
            for event in agent.session.events
            if event.type == "schedule/notice"
        )
        await self.let_time_pass(300.0, times=12 * 24)
        for agent in self.host.agents():
            assert not ScheduleFold.of(agent.session).reminders(), agent.session.id
            assert await self.host.live.flush(agent.session) is True

    async def let_time_pass(self, seconds: float, *, times: int) -> None:
        """Advance the clock by `seconds` until no reminder is active, at most `times` times."""
        for _ in range(times):
            if not any(ScheduleFold.of(a.session).reminders() for a in self.host.agents()):
                return
            await self.settle()
            self.clock.advance(seconds)
            await self.settle()

    # -- checks -------------------------------------------------------------------

    def tool_answers(self) -> tuple[Counter[str], list[str], list[tuple[str, dict[str, Any]]]]:
        """Every schedule tool result against the barriers its call ran.

        Returns the answers by code, the violations, and every success as
        `(session id, tool/result data)`.
        """
        answers: Counter[str] = Counter()
        problems: list[str] = []
        successes: list[tuple[str, dict[str, Any]]] = []
        for session in self.lifecycles:
            events = session.events
            # A resumed lifecycle starts at its own end-seed; earlier events were
            # answered (and checked) in the lifecycle that appended them.
            start = max((e.seq for e in events if e.type == END_SEED), default=0)
            for event in events[start:]:
                if event.type != "tool/result" or data(event).get("name") not in SCHEDULE_TOOLS:
                    continue
                result = data(event)
                call_seq = max(
                    e.seq
                    for e in events[: event.seq]
                    if e.type == "message/assistant"
                    and any(c["id"] == result["callId"] for c in data(e)["toolCalls"])
                )
                outcomes = [
                    record.outcome
                    for record in self.monitor.records
                    if record.session is session
                    and record.task == f"turns {session.id}"
                    and call_seq < record.through <= event.seq
                ]
                expected = expected_answer(outcomes)
                got = result["error"]["code"] if "error" in result else "ok"
                answers[got] += 1
                if got != expected:
                    problems.append(
                        f"{session.id} seq {event.seq}: {result['name']} answered {got} after "
                        f"barriers {outcomes} (expected {expected}): {json.dumps(result)}"
                    )
                if not outcomes:
                    problems.append(f"{session.id} seq {event.seq}: answered without a barrier")
                if got == "ok":
                    successes.append((session.id, result))
        return answers, problems, successes


def stored_schedule(stored_events: tuple[SessionEvent, ...]) -> tuple[set[str], set[str]]:
    """`(create keys, deleted ids)` of a stored log; a create key is its record as JSON."""
    creates: set[str] = set()
    deletes: set[str] = set()
    for event in stored_events:
        if event.type != "schedule/change":
            continue
        change = data(event)
        if change["change"] == "create":
            creates.add(json.dumps(change["record"], sort_keys=True))
        elif change["change"] == "delete":
            deletes.add(change["id"])
    return creates, deletes


def unbacked(result: dict[str, Any], creates: set[str], deletes: set[str]) -> str | None:
    """Why a successful tool result is not backed by the stored log (None if it is)."""
    value = result["value"]
    if result["name"] == "schedule_create":
        stored = {json.loads(record)["id"]: json.loads(record) for record in creates}
        record = stored.get(value["id"])
        keys = ("prompt", "rule", "timeZone", "nextAt", "revision")
        if record is None or any(record[key] != value[key] for key in keys):
            return f"{value['id']} was answered created but is not stored"
    deleted = result["name"] == "schedule_delete" and value.get("deleted") is True
    if deleted and value["id"] not in deletes:
        return f"{value['id']} was answered deleted but its delete is not stored"
    return None


async def test_storage_faults_never_yield_a_false_success_and_the_log_converges(
    tmp_path: Path, rng: random.Random, scale: int, figures: Figures
) -> None:
    backend = FaultyBackend.jsonl(tmp_path)
    clock = FakeClock()
    world: FaultWorld | None = None
    async with Host(
        backend=backend,
        model=DemoModel(),
        plugins=[PluginSpec("tool-schedule")],
        clock=clock,
        cwd=str(tmp_path),
    ) as host:
        monitor = BarrierMonitor(host.live, tmp_path)
        world = FaultWorld(host, backend, clock, monitor, rng)
        for _ in range(STEPS * scale):
            await world.step()
        await world.recover()
        live = {agent.session.id: agent.session for agent in host.agents()}
        for session_id, session in live.items():
            stored = await JsonlBackend(tmp_path).inspect(session_id)
            assert stored is not None
            assert [e.to_json() for e in stored.events] == [e.to_json() for e in session.events]
        world.counters["sessions_converged"] = len(live)
    assert world is not None
    final = JsonlBackend(tmp_path)
    stored_logs = {item.id: await final.inspect(item.id) for item in await final.list()}
    for session_id, session in live.items():
        stored = stored_logs[session_id]
        assert stored is not None and not stored.torn_tail
        assert [e.to_json() for e in stored.events] == [e.to_json() for e in session.events], (
            f"{session_id}: the stored log differs from the live one after a clean close"
        )
    answers, problems, successes = world.tool_answers()
    for session_id, result in successes:
        stored = stored_logs[session_id]
        assert stored is not None
        problem = unbacked(result, *stored_schedule(stored.events))
        if problem is not None:
            problems.append(f"{session_id}: {problem}")
    problems += world.monitor.violations
    fired = Counter[str]()
    for fault in world.faults:
        fired[f"{fault.operation}_{'after' if fault.after_write else 'before'}_write"] += (
            fault.fired
        )
    outcomes = Counter(record.outcome for record in world.monitor.records)
    section = figures.section("storage_faults")
    section.update(sorted(world.counters.items()))
    section["faults_scripted"] = len(world.faults)
    section["faults_fired"] = dict(sorted(fired.items()))
    section["faults_fired_total"] = sum(fired.values())
    section["barrier_refusals_injected"] = world.monitor.refusals_injected
    section["barriers"] = dict(sorted(outcomes.items()))
    section["true_barriers_checked_on_disk"] = world.monitor.true_checked
    section["tool_answers"] = dict(sorted(answers.items()))
    section["false_successes"] = len(problems)
    section["sessions_stored"] = len(stored_logs)
    # A create refused after its file was written leaves a stored Session nobody was
    # told about (allowed: only a success promises storage); counted, not hidden.
    section["stored_after_refused_create"] = len(
        set(stored_logs) - {session.id for session in world.lifecycles}
    )
    assert not problems, "\n".join(problems)
    assert sum(fired.values()) > 0 and outcomes["raised"] > 0, "the run injected nothing"
