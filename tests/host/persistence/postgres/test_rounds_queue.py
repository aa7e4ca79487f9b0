"""`Rounds`, the queue behind PostgreSQL's group commit, with the database replaced by fakes
that record each round and wait until the test lets it finish."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import pytest

from dsh.persistence.errors import StorageError
from dsh.persistence.postgres.rounds import Append, Rounds

pytestmark = pytest.mark.anyio


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
