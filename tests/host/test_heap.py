from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from dsh.heap import HeapPolicy
from dsh.host import Host
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


@pytest.mark.anyio
async def test_a_host_with_a_policy_installs_it_settles_each_session_and_counts_closes(
    thawed: None,
) -> None:
    policy = HeapPolicy()
    async with Host(backend=MemoryBackend(), model=FakeModel(), heap=policy) as host:
        assert policy._collected in gc.callbacks
        agent = await host.create_session(origin="api")
        assert policy.settles == 1
        await host.close_session(agent.session.id)
        assert policy._released == 1
    assert policy._collected not in gc.callbacks
