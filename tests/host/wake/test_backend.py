from __future__ import annotations

import pytest

from dsh.wake import LoadedIndex, MemoryWakeBackend, WakeEntry
from dsh.wake.errors import WakeBackendError

pytestmark = pytest.mark.anyio


def test_an_entry_without_a_time_or_a_dirty_mark_is_no_entry() -> None:
    assert WakeEntry().empty
    assert not WakeEntry(5).empty
    assert not WakeEntry(None, dirty=True).empty


async def test_a_new_memory_store_asks_for_a_rebuild_then_keeps_what_it_was_given() -> None:
    wake = MemoryWakeBackend()
    assert (await wake.load()).problem == "there is no wake index yet"
    await wake.write([("a", WakeEntry(5)), ("b", WakeEntry(None, True)), ("a", WakeEntry())])
    assert await wake.load() == LoadedIndex({"b": WakeEntry(None, True)})
    await wake.replace({"c": WakeEntry(1), "d": WakeEntry()})
    assert await wake.load() == LoadedIndex({"c": WakeEntry(1)})
    assert await wake.claim("c") is True
    await wake.aclose()


async def test_a_discarded_memory_store_asks_for_a_rebuild_and_failures_are_errors() -> None:
    wake = MemoryWakeBackend({"a": WakeEntry(1)})
    await wake.discard()
    assert (await wake.load()).problem is not None
    wake.fail_writes = True
    with pytest.raises(WakeBackendError, match="writes are failing"):
        await wake.write([("a", WakeEntry(1))])
    with pytest.raises(WakeBackendError):
        await wake.replace({})
    wake.fail_discard = True
    with pytest.raises(WakeBackendError, match="cannot discard"):
        await wake.discard()
