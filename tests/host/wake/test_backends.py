from __future__ import annotations

from pathlib import Path

import pytest

from dsh.persistence.backends import StoreChoice, StoreKind, choose_store
from dsh.wake import JsonlWakeStore, MemoryWakeStore
from dsh.wake.backends import WakeUnavailable, wake_store_for


def test_a_jsonl_store_keeps_its_wake_index_next_to_the_logs(tmp_path: Path) -> None:
    store = wake_store_for(choose_store(f"jsonl:{tmp_path}", tmp_path, environ={}))
    assert isinstance(store, JsonlWakeStore)
    assert store.path == tmp_path / "wake-index.jsonl"
    assert store.description == f"the wake index {tmp_path / 'wake-index.jsonl'}"


def test_a_memory_store_keeps_it_in_memory(tmp_path: Path) -> None:
    assert isinstance(
        wake_store_for(choose_store("memory:", tmp_path, environ={})), MemoryWakeStore
    )


def test_a_store_kind_without_a_wake_index_is_refused_by_name(tmp_path: Path) -> None:
    memory = choose_store("memory:", tmp_path, environ={})
    other = StoreChoice(
        StoreKind(
            name="sqlite",
            settings=type(memory.settings),
            fields=memory.kind.fields,
            open=memory.kind.open,
            lock=memory.kind.lock,
            describe=memory.kind.describe,
        ),
        memory.settings,
    )
    with pytest.raises(WakeUnavailable, match="not available with the sqlite store"):
        wake_store_for(other)


@pytest.mark.anyio
async def test_dsh_web_builds_its_host_with_the_overlays_lifecycle(tmp_path: Path) -> None:
    from dsh.plugins.overlay import parse_overlay
    from dsh.web.launch import make_host_factory

    store = choose_store(f"jsonl:{tmp_path}", tmp_path, environ={})
    wake = make_host_factory(
        parse_overlay("[host]\nwake_cold_sessions = true\nidle_seconds = 30\n"), store, "absent"
    )()
    assert wake.lifecycle.wakes is True
    assert wake.lifecycle.hibernator is not None and wake.lifecycle.hibernator.idle_ms == 30_000
    plain = make_host_factory(parse_overlay("[host]\nidle_seconds = 0\n"), store, "absent")()
    assert plain.lifecycle.wakes is False and plain.lifecycle.hibernator is None
    default = make_host_factory(parse_overlay(""), store, "absent")()
    assert default.lifecycle.hibernator is not None
    assert default.lifecycle.hibernator.idle_ms == 300_000
    async with wake:
        assert wake.lifecycle.index is not None and wake.lifecycle.index.rebuilt is True
