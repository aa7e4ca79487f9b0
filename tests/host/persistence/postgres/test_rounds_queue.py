"""`Rounds`, the queue behind PostgreSQL's group commit, with the database replaced by fakes
that record each round and wait until the test lets it finish."""

from __future__ import annotations

import random
from collections.abc import Sequence

import anyio
import pytest
from anyio.lowlevel import checkpoint

from dsh.persistence.errors import StorageError
from dsh.persistence.postgres.rounds import Append, Rounds

pytestmark = pytest.mark.anyio

DEADLINE = 10  # seconds; every test here ends in milliseconds when nothing is lost


def _append(session_id: str, start: int = 0) -> Append:
    return Append(session_id, start, ["t"], ["{}"], False, None, None, None, None)


class FakeStore:
    """Records every round (the Session ids in it) and holds each until `release()`."""

    def __init__(self) -> None:
        self.rounds: list[list[tuple[str, int]]] = []
        self.gate = anyio.Event()
        self.started = anyio.Event()

    def release(self) -> None:
        self.gate.set()

    async def one(self, append: Append) -> None:
        await self._hold([append])

    async def several(self, round_: Sequence[Append]) -> bool:
        await self._hold(round_)
        return True

    async def _hold(self, round_: Sequence[Append]) -> None:
        self.rounds.append([(append.session_id, append.start) for append in round_])
        self.started.set()
        await self.gate.wait()


async def test_a_sessions_later_append_waits_for_its_earlier_one_in_another_round() -> None:
    store = FakeStore()
    rounds = Rounds(store.one, store.several, in_flight=2)
    with anyio.fail_after(DEADLINE):  # a lost wake-up fails, never hangs
        async with anyio.create_task_group() as group:
            group.start_soon(rounds.commit, _append("s1", 0))
            await store.started.wait()
            group.start_soon(rounds.commit, _append("s1", 1))
            group.start_soon(rounds.commit, _append("s2", 0))
            await anyio.wait_all_tasks_blocked()
            # A second round may go while the first commits, but without s1's next append.
            assert store.rounds == [[("s1", 0)], [("s2", 0)]]
            store.release()
    assert store.rounds[2:] == [[("s1", 1)]]
    assert rounds.rounds == 3


async def test_appends_queued_behind_a_round_go_together_and_at_most_limit_at_a_time() -> None:
    store = FakeStore()
    rounds = Rounds(store.one, store.several, in_flight=1, limit=3)
    with anyio.fail_after(DEADLINE):  # a lost wake-up fails, never hangs
        async with anyio.create_task_group() as group:
            group.start_soon(rounds.commit, _append("a"))
            await store.started.wait()
            for session_id in "edcb":
                group.start_soon(rounds.commit, _append(session_id))
            await anyio.wait_all_tasks_blocked()
            store.release()
    # In Session-id order within a round (one locking order for every round).
    assert store.rounds == [[("a", 0)], [("c", 0), ("d", 0), ("e", 0)], [("b", 0)]]
    assert rounds.grouped == 3


async def test_a_cancelled_leader_leaves_the_others_in_its_round_an_unknown_outcome() -> None:
    store = FakeStore()
    rounds = Rounds(store.one, store.several, in_flight=1)
    outcomes: dict[str, str] = {}
    scopes: dict[str, anyio.CancelScope] = {}

    async def commit(session_id: str) -> None:
        with anyio.CancelScope() as scopes[session_id]:
            try:
                await rounds.commit(_append(session_id))
            except StorageError as error:
                outcomes[session_id] = str(error)
                return
            outcomes[session_id] = "stored"
        if scopes[session_id].cancelled_caught:
            outcomes[session_id] = "cancelled"

    with anyio.fail_after(DEADLINE):  # a lost wake-up fails, never hangs
        async with anyio.create_task_group() as group:
            group.start_soon(commit, "a")
            await store.started.wait()
            group.start_soon(commit, "b")  # waits first, so leads the next round
            await anyio.wait_all_tasks_blocked()
            group.start_soon(commit, "c")
            await anyio.wait_all_tasks_blocked()
            gate, store.gate, store.started = store.gate, anyio.Event(), anyio.Event()
            gate.set()  # a's round ends
            await store.started.wait()
            assert store.rounds[1] == [("b", 0), ("c", 0)]
            scopes["b"].cancel()
    assert outcomes["a"] == "stored"
    assert outcomes["b"] == "cancelled"
    assert "session c: the round that carried events from 0 was cancelled" in outcomes["c"]
    assert "whether they are stored is unknown" in outcomes["c"]


async def test_rounds_need_room_for_one_append() -> None:
    store = FakeStore()
    with pytest.raises(ValueError, match="at least 1, not 0 and 64"):
        Rounds(store.one, store.several, in_flight=0)


async def test_a_waiting_append_that_is_cancelled_is_never_written_and_the_next_leads() -> None:
    store = FakeStore()
    rounds = Rounds(store.one, store.several, in_flight=1)
    waiting = anyio.CancelScope()

    async def give_up() -> None:
        with waiting:
            await rounds.commit(_append("b"))

    with anyio.fail_after(DEADLINE):  # a lost wake-up fails, never hangs
        async with anyio.create_task_group() as group:
            group.start_soon(rounds.commit, _append("a"))
            await store.started.wait()
            group.start_soon(give_up)
            await anyio.wait_all_tasks_blocked()
            waiting.cancel()  # b gives up while a's round commits
            group.start_soon(rounds.commit, _append("c"))
            await anyio.wait_all_tasks_blocked()
            store.release()
    assert store.rounds == [[("a", 0)], [("c", 0)]]


class ChaosStore:
    """A store whose rounds take a random number of loop passes and fail in every way
    `Rounds` is told of (a round failing as a whole, a value refused before sending, one
    append refused); it checks what must hold of every round it is given."""

    def __init__(self, rng: random.Random, in_flight: int) -> None:
        self.rng = rng
        self.in_flight = in_flight
        self.writing: set[str] = set()  # Sessions in a round being committed
        self.running = 0
        self.stored: dict[str, list[int]] = {}  # each Session's starts, in commit order
        self.failing = True

    def _fails(self) -> bool:
        return self.failing and self.rng.random() < 0.1

    async def one(self, append: Append) -> None:
        await self._hold([append], [self._fails()])
        if append.error is not None:
            error, append.error = append.error, None
            raise error

    async def several(self, round_: Sequence[Append]) -> bool:
        fate = self.rng.random() if self.failing else 1.0
        if fate < 0.1:
            await self._hold(round_, [False] * len(round_), store=False)
            raise StorageError(f"the round of {len(round_)} failed")
        if fate < 0.2:
            await self._hold(round_, [False] * len(round_), store=False)
            return False
        await self._hold(round_, [self._fails() for _ in round_])
        return True

    async def _hold(
        self, round_: Sequence[Append], refused: list[bool], store: bool = True
    ) -> None:
        ids = {append.session_id for append in round_}
        assert len(ids) == len(round_), "a Session twice in one round"
        assert not ids & self.writing, "a Session in two rounds at once"
        assert self.running < self.in_flight, "more rounds at once than allowed"
        self.writing |= ids
        self.running += 1
        try:
            for _ in range(self.rng.randrange(12)):
                await checkpoint()
        finally:
            self.running -= 1
            self.writing -= ids
        for append, no in zip(round_, refused, strict=True):
            if no:
                append.error = StorageError(f"session {append.session_id} refused")
            elif store:
                self.stored.setdefault(append.session_id, []).append(append.start)


@pytest.mark.parametrize("seed", range(12))
async def test_every_append_ends_however_its_rounds_fail_or_its_callers_are_cancelled(
    seed: int,
) -> None:
    """Liveness under chaos: many Sessions' writers append one batch after another
    while rounds fail, values are refused and callers (waiting or leading) are
    cancelled at random. Every call ends, a Session's batches are committed in order
    and never in two rounds at once, and afterwards an append leads at once."""
    rng = random.Random(seed)
    in_flight = 1 + seed % 3
    store = ChaosStore(rng, in_flight)
    rounds = Rounds(store.one, store.several, in_flight=in_flight, limit=1 + seed % 5)
    ended: list[str] = []
    stored: list[tuple[str, int]] = []  # what a caller was told is stored
    scopes: list[anyio.CancelScope] = []

    async def writer(session_id: str, count: int) -> None:
        for start in range(count):
            with anyio.CancelScope() as scope:
                scopes.append(scope)
                try:
                    await rounds.commit(_append(session_id, start))
                except StorageError:
                    ended.append("failed")
                else:
                    ended.append("stored")
                    stored.append((session_id, start))
            if scope.cancelled_caught:
                ended.append("cancelled")
                if rng.random() < 0.5:
                    return  # its Session closed; else the next batch goes while this one may not
            for _ in range(rng.randrange(3)):
                await checkpoint()

    async def canceller() -> None:
        for _ in range(40):
            for _ in range(rng.randrange(1, 8)):
                await checkpoint()
            rng.choice(scopes[-len(sessions) :]).cancel()  # mostly calls not yet ended

    sessions = {f"s{number:02d}": rng.randrange(1, 12) for number in range(24)}
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:
            for session_id, count in sessions.items():
                group.start_soon(writer, session_id, count)
            group.start_soon(canceller)
        assert len(ended) == len(scopes)  # every call ended, one way or another
        assert ended.count("stored") > 0 and ended.count("cancelled") > 0
        for session_id, starts in store.stored.items():
            assert starts == sorted(starts), session_id
        assert all(start in store.stored[session_id] for session_id, start in stored)
        # Nothing is left held: every Session's next append is committed at once, alone.
        store.failing, before = False, rounds.rounds
        for session_id in sessions:
            await rounds.commit(_append(session_id, 99))
        assert rounds.rounds == before + len(sessions)
