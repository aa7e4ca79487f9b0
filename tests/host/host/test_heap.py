from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from dsh.host.heap import HeapPolicy
from dsh.host.host import Host
from dsh.persistence import MemoryBackend
from dsh.testing import FakeModel


@pytest.fixture
def thawed() -> Iterator[None]:
    yield
    gc.unfreeze()  # what a test froze must not stay out of the suite's collections


class Node:
    def __init__(self) -> None:
        self.me = self


def test_settle_freezes_what_survives(thawed: None) -> None:
    policy = HeapPolicy()
    kept = [Node() for _ in range(10)]
    before = gc.get_freeze_count()
    policy.settle()
    assert gc.get_freeze_count() >= before + len(kept)
    assert policy.settles == 1


def test_an_installed_policy_freezes_after_each_generation_1_collection(thawed: None) -> None:
    policy = HeapPolicy()
    policy.install()
    policy.install()  # once only
    try:
        kept = [Node() for _ in range(10)]
        gc.collect(1)
        assert policy.freezes == 1
        frozen = gc.get_freeze_count()
        assert frozen >= len(kept)
        gc.collect(0)
        assert policy.freezes == 1  # only generation 1 freezes
    finally:
        policy.uninstall()
        policy.uninstall()
    gc.collect(1)
    assert policy.freezes == 1


def test_reclaim_runs_after_enough_closes_and_collects_frozen_garbage(thawed: None) -> None:
    policy = HeapPolicy(reclaim_every=2)
    Node()  # a cycle, garbage at once
    gc.freeze()
    policy.released()
    assert policy.reclaims == 0
    policy.released()
    assert policy.reclaims == 1
    assert not any(isinstance(item, Node) for item in gc.get_objects())
    with pytest.raises(ValueError, match="at least 1"):
        HeapPolicy(reclaim_every=0)


def test_the_reclaim_interval_grows_while_reclaims_find_little_and_shrinks_when_they_find_much(
    thawed: None,
) -> None:
    policy = HeapPolicy(reclaim_every=2)
    gc.collect()
    gc.disable()  # only the policy's reclaims collect here
    try:
        for _ in range(2):
            policy.released()
        assert (policy.reclaims, policy.interval) == (1, 4)  # nothing found: wait longer
        for _ in range(3):
            policy.released()
        assert policy.reclaims == 1
        policy.released()
        assert (policy.reclaims, policy.interval) == (2, 8)
        for _ in range(8):
            for _ in range(10):
                Node()  # a cycle: garbage left behind by this "close"
            policy.released()
        assert policy.reclaims == 3
        assert policy.interval == 4  # halved, never below the starting interval
        for _ in range(4 + 8 + 16 + 32):
            policy.released()
        assert (policy.reclaims, policy.interval) == (7, 64)  # grows again
        capped = HeapPolicy(reclaim_every=40_000)
        capped.reclaim()
        assert capped.interval == 64_000  # doubles up to RECLAIM_MOST at most
    finally:
        gc.enable()


def test_a_due_reclaim_waits_while_sessions_go_live_but_not_forever(thawed: None) -> None:
    now = [100.0]
    policy = HeapPolicy(reclaim_every=2, clock=lambda: now[0])
    policy.settle()  # a Session just went live: busy
    for _ in range(2):
        policy.released()
    assert policy.reclaims == 0  # due, waiting for quiet
    now[0] += 0.5
    policy.touch()  # an event appended somewhere: still busy
    now[0] += 0.9
    policy.released()
    assert policy.reclaims == 0
    now[0] += 0.1
    policy.released()
    assert policy.reclaims == 1  # quiet for a second: taken
    policy.settle()
    for _ in range(4 * policy.interval - 1):
        policy.released()
    assert policy.reclaims == 1
    policy.released()
    assert policy.reclaims == 2  # four intervals overdue: taken although busy


@pytest.mark.anyio
async def test_a_host_with_a_policy_installs_it_settles_each_session_and_counts_closes(
    thawed: None,
) -> None:
    policy = HeapPolicy()
    async with Host(backend=MemoryBackend(), model=FakeModel(), heap=policy) as host:
        assert policy._collected in gc.callbacks
        agent = await host.create_session(origin="api")
        assert policy.settles == 1
        before = policy._active_at
        host.live.append(agent.session, "test/event", {})
        assert policy._active_at > before  # every append counts as activity
        await host.close_session(agent.session.id)
        assert policy._released == 1
    assert policy._collected not in gc.callbacks
