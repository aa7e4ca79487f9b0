from __future__ import annotations

from pathlib import Path

import pytest

from dsh.persistence.backends import BackendChoice, BackendKind, choose_backend
from dsh.wake import JsonlWakeBackend, MemoryWakeBackend
from dsh.wake.backends import wake_backend_for
from dsh.wake.errors import WakeUnavailable


def test_a_jsonl_store_keeps_its_wake_index_next_to_the_logs(tmp_path: Path) -> None:
    wake = wake_backend_for(choose_backend(f"jsonl:{tmp_path}", tmp_path, environ={}))
    assert isinstance(wake, JsonlWakeBackend)
    assert wake.path == tmp_path / "wake-index.jsonl"
    assert wake.description == f"the wake index {tmp_path / 'wake-index.jsonl'}"


def test_a_memory_store_keeps_it_in_memory(tmp_path: Path) -> None:
    assert isinstance(
        wake_backend_for(choose_backend("memory:", tmp_path, environ={})), MemoryWakeBackend
    )


def test_a_store_kind_without_a_wake_index_is_refused_by_name(tmp_path: Path) -> None:
    memory = choose_backend("memory:", tmp_path, environ={})
    other = BackendChoice(
        BackendKind(
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
        wake_backend_for(other)


@pytest.mark.anyio
async def test_dsh_web_builds_its_host_with_the_overlays_lifecycle(tmp_path: Path) -> None:
    from dsh.plugins.overlay import parse_overlay
    from dsh.web.launch import make_host_factory

    choice = choose_backend(f"jsonl:{tmp_path}", tmp_path, environ={})
    wake = make_host_factory(
        parse_overlay("[host]\nwake_cold_sessions = true\nidle_seconds = 30\n"), choice, "absent"
    )()
    assert wake.lifecycle.wakes is True
    assert wake.lifecycle.hibernator is not None and wake.lifecycle.hibernator.idle_ms == 30_000
    plain = make_host_factory(parse_overlay("[host]\nidle_seconds = 0\n"), choice, "absent")()
    assert plain.lifecycle.wakes is False and plain.lifecycle.hibernator is None
    default = make_host_factory(parse_overlay(""), choice, "absent")()
    assert default.lifecycle.hibernator is not None
    assert default.lifecycle.hibernator.idle_ms == 300_000
    async with wake:
        assert wake.lifecycle.index is not None and wake.lifecycle.index.rebuilt is True
