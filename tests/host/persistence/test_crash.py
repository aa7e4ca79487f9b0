"""SIGKILL a writer at random moments; every acknowledged event must survive.

Each round starts a child (`crash_child.py`) on the same JSONL log — a new
Session first, resumed ones after — waits until it has acknowledged a random
number (at least one) of new flushes, kills it with SIGKILL and checks the log
with a fresh backend. Some rounds first leave a torn tail, as a crash during an
append would, which the next child must truncate before it appends.
"""

from __future__ import annotations

import os
import random
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from dsh.persistence import JsonlBackend
from dsh.session.event import SessionEvent
from dsh.session.types import END_SEED

pytestmark = [pytest.mark.anyio, pytest.mark.crash]

CHILD = Path(__file__).with_name("crash_child.py")
ROUNDS = 24
TORN = b'{"seq":99999999,"type":"torn/marker","time":0,"da'


async def read_acks(process: Process, wanted: int) -> list[int]:
    """Boundaries the child acknowledged: at least `wanted`, then whatever it printed."""
    assert process.stdout is not None
    lines = BufferedByteReceiveStream(process.stdout)
    acks: list[int] = []
    try:
        while len(acks) < wanted:
            acks.append(int(await lines.receive_until(b"\n", 32)))
    except (anyio.EndOfStream, anyio.IncompleteRead):
        assert process.stderr is not None
        errors = b"".join([chunk async for chunk in process.stderr])
        pytest.fail(f"child exited after {acks}:\n{errors.decode(errors='replace')}")
    process.kill()
    await process.wait()
    # Lines already printed were acknowledged before the kill: they count too.
    try:
        while True:
            acks.append(int(await lines.receive_until(b"\n", 32)))
    except (anyio.EndOfStream, anyio.IncompleteRead):
        pass
    return acks


def check_log(events: tuple[SessionEvent, ...], lifecycles: int) -> None:
    """One run of ticks per child, each counting from 0 with no gap or repeat."""
    assert [event.seq for event in events] == list(range(len(events)))
    starts = [event.seq for event in events if event.type == END_SEED]
    assert len(starts) == lifecycles - 1, "every resumed child stored its end-seed"
    expected: dict[str, Any] | None = None
    for event in events:
        if event.type == END_SEED:
            expected = None
            continue
        assert event.type == "test/tick"
        assert isinstance(event.data, dict)
        if expected is None:
            expected = {"pid": event.data["pid"], "n": 0}
        assert event.data == expected, f"at seq {event.seq}"
        expected = {"pid": expected["pid"], "n": expected["n"] + 1}


async def test_acknowledged_events_survive_sigkill_and_resumed_children_continue(
    tmp_path: Path,
) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    log = tmp_path / "sessions" / "s1.jsonl"
    acknowledged = 0
    with anyio.fail_after(240):
        for round_number in range(ROUNDS):
            torn = round_number % 3 == 2
            if torn:
                with log.open("ab") as file:
                    file.write(TORN)
            process = await anyio.open_process(
                [sys.executable, str(CHILD), str(tmp_path), "s1"],
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            async with process:
                with anyio.fail_after(60):
                    acks = await read_acks(process, wanted=1 + rng.randint(0, 4))
            assert process.returncode == -signal.SIGKILL
            context = f"seed {seed}, round {round_number}, acks {acks}"
            assert acks == sorted(acks), context
            assert acks[0] >= acknowledged, context  # a resumed child holds everything before
            acknowledged = acks[-1]

            stored = await JsonlBackend(tmp_path).inspect("s1")
            assert stored is not None, context
            assert len(stored.events) >= acknowledged, context
            check_log(stored.events, lifecycles=round_number + 1)
            assert b"torn/marker" not in log.read_bytes(), context
