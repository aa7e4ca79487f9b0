"""Which appends share a group commit (`JsonlBackend`'s rule 2: a round gathers first), and
what each of them is told when one is cancelled or the backend closes."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncIterator
from contextlib import nullcontext
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from dsh.persistence import JsonlBackend
from dsh.persistence.jsonl import backend as backend_module
from dsh.persistence.jsonl import logs
from tests.support.deadlines import WAIT, until

from .contract import events
from .test_jsonl import read_afresh, stored_sessions

pytestmark = pytest.mark.anyio


class Rounds:
    """The number of batches in each round the I/O worker writes; the first round waits
    in the worker until `gate` is set, and sets `written` once it is written."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes: list[int] = []
        self.gate = threading.Event()
        self.written = threading.Event()
        real = logs.LogFiles.append_round

        def recording(files: logs.LogFiles, batches: list[object]) -> None:
            self.sizes.append(len(batches))
            first = len(self.sizes) == 1
            if first:
                self.gate.wait(WAIT)
            real(files, batches)  # type: ignore[arg-type]
            if first:
                self.written.set()

        monkeypatch.setattr(logs.LogFiles, "append_round", recording)


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[JsonlBackend]:
    backend = JsonlBackend(tmp_path)
    yield backend
    await backend.aclose()


class Stream:
    """Appends two more Sessions each pass of the event loop, after a first round (of s0)
    that is held in the worker until the stream runs; stops `after` passes once the
    next round has begun."""

    def __init__(self, backend: JsonlBackend, ids: list[str], rounds: Rounds) -> None:
        self.backend = backend
        self.ids = ids
        self.rounds = rounds
        self.done: set[str] = set()
        self.streamed: list[str] = []

    async def _one(self, session_id: str) -> None:
        await self.backend.append(session_id, events(1, 2))
        self.done.add(session_id)

    def next_round_begun(self) -> bool:
        return "s0" in self.done and self.backend._committing

    async def run(self, *, after: int) -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(self._one, "s0")
            await until(lambda: self.rounds.sizes == [1], "the first round in the worker")
            self.rounds.gate.set()
            # The loop stays busy while the worker writes that round, as a host's loop
            # is in a storm: it waits for the worker's word, so the round's end reaches
            # the loop only once the stream below is under way.
            assert self.rounds.written.wait(WAIT), "the first round was never written"
            begun_at: int | None = None
            waiting = iter(self.ids[1:])
            for passes in itertools.count():
                # Two each pass: whichever slot of the pass the gathering task has,
                # one of them lands between two of its looks.
                for session_id in itertools.islice(waiting, 2):
                    group.start_soon(self._one, session_id)  # queued next pass
                    self.streamed.append(session_id)
                await anyio.lowlevel.checkpoint()
                if begun_at is None and self.next_round_begun():
                    begun_at = passes
                if begun_at is not None and passes - begun_at >= after:
                    break
                if len(self.streamed) == len(self.ids) - 1:
                    pytest.fail("the stream ran out before it could end")
        assert self.done == {"s0", *self.streamed}


async def test_appends_that_crowd_in_pass_by_pass_are_gathered_into_one_round(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = list(await stored_sessions(backend, tmp_path, 200))
    rounds = Rounds(monkeypatch)
    stream = Stream(backend, ids, rounds)

    await stream.run(after=5)

    # The round after s0's began while appends kept arriving: it took every one of them.
    assert rounds.sizes == [1, len(stream.streamed)]
    for session_id in ["s0", *stream.streamed]:
        assert await backend.read(session_id) == events(0, 2)


async def test_a_round_gathers_for_at_most_its_passes(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = list(await stored_sessions(backend, tmp_path, 200))
    monkeypatch.setattr(backend_module, "GATHER_PASSES", 3)
    rounds = Rounds(monkeypatch)
    stream = Stream(backend, ids, rounds)

    await stream.run(after=40)

    assert len(rounds.sizes) >= 3  # a stream that never pauses does not hold rounds back
    assert sum(rounds.sizes) == 1 + len(stream.streamed)


async def test_appends_started_in_the_pass_of_the_first_share_its_round(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = list(await stored_sessions(backend, tmp_path, 5))
    rounds = Rounds(monkeypatch)
    rounds.gate.set()

    # Reminders due together: their dispatches are appended in one pass of the loop.
    async with anyio.create_task_group() as group:
        for session_id in ids:
            group.start_soon(backend.append, session_id, events(1, 2))

    assert rounds.sizes == [5]  # none waited for a round of the first alone
    for session_id in ids:
        assert await backend.read(session_id) == events(0, 2)


async def test_a_lone_append_waits_one_pass_of_the_loop_and_no_more(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await stored_sessions(backend, tmp_path, 1)
    rounds = Rounds(monkeypatch)
    rounds.gate.set()
    passes: list[int] = []
    real_checkpoint = backend_module.checkpoint

    async def counted() -> None:
        passes.append(len(backend._queue))
        await real_checkpoint()

    monkeypatch.setattr(backend_module, "checkpoint", counted)
    for seq in range(1, 6):  # one Session, each append after the last
        await backend.append("s0", events(seq, seq + 1))

    assert passes == [1] * 5 and rounds.sizes == [1] * 5
    assert await backend.read("s0") == events(0, 6)


async def test_a_gathering_append_that_is_cancelled_leaves_the_round_to_the_others(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = await stored_sessions(backend, tmp_path, 3)
    rounds = Rounds(monkeypatch)
    done: set[str] = set()
    cancelled: list[str] = []

    async def one(session_id: str, scope: anyio.CancelScope | None = None) -> None:
        with scope or anyio.CancelScope():
            await backend.append(session_id, events(1, 2))
            done.add(session_id)
            return
        cancelled.append(session_id)

    s1_scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(one, "s0")
        await until(lambda: rounds.sizes == [1], "the first round in the worker")
        group.start_soon(one, "s1", s1_scope)
        await until(lambda: len(backend._queue) == 1, "s1 waiting")
        group.start_soon(one, "s2")
        await until(lambda: len(backend._queue) == 2, "s2 waiting")
        rounds.gate.set()
        # s1 waited first, so it leads the next round, and gathers first.
        await until(lambda: "s0" in done and backend._committing, "s1 gathering")
        assert rounds.sizes == [1]
        s1_scope.cancel()

    assert cancelled == ["s1"] and done == {"s0", "s2"}
    assert rounds.sizes == [1, 1]  # s2 alone: s1 left before anything was taken
    assert (tmp_path / "sessions" / "s1.jsonl").stat().st_size == sizes["s1"]
    assert await backend.read("s1") == events(0, 1)
    assert await backend.read("s2") == events(0, 2)


async def test_a_round_whose_leader_is_cancelled_by_its_task_answers_each_append_truly(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `asyncio.timeout`, `wait_for` and asyncio's task groups cancel past anyio's shield.
    await stored_sessions(backend, tmp_path, 2)
    rounds = Rounds(monkeypatch)
    loop = asyncio.get_running_loop()
    leader = loop.create_task(backend.append("s0", events(1, 2)))
    partner = loop.create_task(backend.append("s1", events(1, 2)))
    await until(lambda: rounds.sizes == [2], "one round of both, held in the worker")
    leader.cancel()
    await anyio.lowlevel.checkpoint()
    assert not leader.done()  # it waits for the round it handed over
    rounds.gate.set()

    with pytest.raises(asyncio.CancelledError):
        await leader
    await partner  # stored, and told so: its batch is not handed over again
    assert rounds.sizes == [2]
    assert await backend.read("s0") == events(0, 2)
    assert await backend.read("s1") == events(0, 2)


@pytest.mark.parametrize("cancel", ["anyio", "task"])
async def test_a_cancelled_append_whose_batch_is_in_the_round_leaves_once_it_is_written(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cancel: str
) -> None:
    await stored_sessions(backend, tmp_path, 2)
    rounds = Rounds(monkeypatch)
    written_when_left: list[bool] = []

    async def partner(scope: anyio.CancelScope) -> None:
        try:
            with scope:
                await backend.append("s1", events(1, 2))
        finally:
            written_when_left.append(rounds.written.is_set())

    scope = anyio.CancelScope()
    async with anyio.create_task_group() as group:
        group.start_soon(backend.append, "s0", events(1, 2))
        task = asyncio.get_running_loop().create_task(partner(scope))
        await until(lambda: rounds.sizes == [2], "one round of both, held in the worker")
        for _ in range(2):  # a second cancellation while it waits changes nothing
            if cancel == "anyio":
                scope.cancel()
            else:
                task.cancel()
            await anyio.lowlevel.checkpoint()
        assert written_when_left == []  # still waiting for the round that holds its batch
        rounds.gate.set()
        with pytest.raises(asyncio.CancelledError) if cancel == "task" else nullcontext():
            await task

    assert written_when_left == [True]
    assert await backend.read("s1") == events(0, 2)


async def test_aclose_writes_what_was_appended_before_it_then_releases_every_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = JsonlBackend(tmp_path)
    await stored_sessions(backend, tmp_path, 2)
    rounds = Rounds(monkeypatch)
    done: list[str] = []

    async def one(session_id: str) -> None:
        await backend.append(session_id, events(1, 2))
        done.append(session_id)

    async with anyio.create_task_group() as group:
        group.start_soon(one, "s0")
        await until(lambda: rounds.sizes == [1], "s0's round held in the worker")
        group.start_soon(backend.aclose)
        await anyio.lowlevel.checkpoint()
        group.start_soon(one, "s1")
        await until(lambda: len(backend._queue) == 1, "s1 waiting for the next round")
        rounds.gate.set()  # aclose waited first, so it leads the round that writes s1

    assert sorted(done) == ["s0", "s1"] and rounds.sizes == [1, 1]
    assert backend._files._writers == {}  # released after the last round, not before
    assert not backend._worker.running
    assert await read_afresh(tmp_path, "s1") == events(0, 2)


async def test_a_round_the_worker_fails_outright_is_retried_for_all_but_the_append_that_led_it(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = await stored_sessions(backend, tmp_path, 2)
    real = logs.LogFiles.append_round
    calls: list[int] = []

    def fails_once(files: logs.LogFiles, batches: list[object]) -> None:
        calls.append(len(batches))
        if len(calls) == 1:
            raise RuntimeError("the worker's bookkeeping broke")  # before any batch
        real(files, batches)  # type: ignore[arg-type]

    monkeypatch.setattr(logs.LogFiles, "append_round", fails_once)
    outcomes: dict[str, str] = {}

    async def one(session_id: str) -> None:
        try:
            await backend.append(session_id, events(1, 2))
            outcomes[session_id] = "stored"
        except RuntimeError as error:
            outcomes[session_id] = str(error)

    async with anyio.create_task_group() as group:
        group.start_soon(one, "s0")  # leads the round
        group.start_soon(one, "s1")

    assert outcomes == {"s0": "the worker's bookkeeping broke", "s1": "stored"}
    assert calls == [2, 1]
    assert (tmp_path / "sessions" / "s0.jsonl").stat().st_size == sizes["s0"]
    assert await backend.read("s1") == events(0, 2)
