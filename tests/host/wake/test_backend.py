from __future__ import annotations

import pytest

from dsh.wake import LoadedIndex, MemoryWakeStore, WakeEntry, WakeStoreError

pytestmark = pytest.mark.anyio


def test_an_entry_without_a_time_or_a_dirty_mark_is_no_entry() -> None:
    assert WakeEntry().empty
    assert not WakeEntry(5).empty
    assert not WakeEntry(None, dirty=True).empty


async def test_a_new_memory_store_asks_for_a_rebuild_then_keeps_what_it_was_given() -> None:
    store = MemoryWakeStore()
    assert (await store.load()).problem == "there is no wake index yet"
    await store.write([("a", WakeEntry(5)), ("b", WakeEntry(None, True)), ("a", WakeEntry())])
    assert await store.load() == LoadedIndex({"b": WakeEntry(None, True)})
    await store.replace({"c": WakeEntry(1), "d": WakeEntry()})
    assert await store.load() == LoadedIndex({"c": WakeEntry(1)})
    assert await store.claim("c") is True
    await store.aclose()


async def test_a_discarded_memory_store_asks_for_a_rebuild_and_failures_are_errors() -> None:
    store = MemoryWakeStore({"a": WakeEntry(1)})
    await store.discard()
    assert (await store.load()).problem is not None
    store.fail_writes = True
    with pytest.raises(WakeStoreError, match="writes are failing"):
        await store.write([("a", WakeEntry(1))])
    with pytest.raises(WakeStoreError):
        await store.replace({})
    store.fail_discard = True
    with pytest.raises(WakeStoreError, match="cannot discard"):
        await store.discard()
