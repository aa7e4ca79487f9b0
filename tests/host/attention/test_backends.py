"""The attention store contract, for every backend: memory, a JSONL file, PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from dsh.attention.alert import Alert
from dsh.attention.backend import (
    KEEP_READ_MS,
    AttentionBackend,
    AttentionRecord,
    MemoryAttentionBackend,
)
from dsh.attention.backends import attention_backend_for
from dsh.attention.jsonl import JsonlAttentionBackend
from dsh.persistence.jsonl import JsonlBackend
from dsh.persistence.memory import MemoryBackend

pytestmark = pytest.mark.anyio

A, B = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
NOW = 1_800_000_000_000


def alert(session_id: str, seq: int, at: int = NOW, title: str = "stretch") -> Alert:
    return Alert(session_id, seq, title, "due 9:00", f"{session_id}/{seq}", at)


@pytest.fixture(params=["memory", "jsonl", pytest.param("postgres", marks=pytest.mark.pg)])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Callable[[], AttentionBackend]]:
    """A function making a backend on the same place each time (a restart)."""
    made: list[AttentionBackend] = []
    memory = MemoryAttentionBackend()
    if request.param == "postgres":
        from dsh.attention.postgres import PostgresAttentionBackend

        from ..persistence.postgres.test_backend import backend_for

        database = backend_for(request.getfixturevalue("pg_url"))
        await database.prepare()

    def make() -> AttentionBackend:
        if request.param == "memory":
            return memory
        if request.param == "jsonl":
            backend: AttentionBackend = JsonlAttentionBackend(tmp_path, now=lambda: NOW)
        else:
            backend = PostgresAttentionBackend(database, now=lambda: NOW)
        made.append(backend)
        return backend

    yield make
    for backend in made:
        await backend.aclose()
    if request.param == "postgres":
        await database.aclose()


async def test_a_session_never_seen_has_no_check_and_no_unread(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    assert await backend.checked(A) is None
    assert await backend.unread([A]) == {} and await backend.unread() == {}
    assert await backend.since(0, 10) == [] and await backend.alerts(A, [1]) == []


async def test_recorded_alerts_are_unread_until_a_read_mark_passes_them(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    assert await backend.record(A, [alert(A, 3), alert(A, 7)], 8) == 2
    assert await backend.record(B, [alert(B, 1)], 2) == 1
    assert await backend.checked(A) == 8
    assert await backend.unread() == {A: 2, B: 1}
    assert await backend.unread([A, "cccccccccccccccc"]) == {A: 2}
    assert await backend.read(A, 4) == 1  # 3 is read, 7 is not
    assert await backend.read(A, 2) == 1  # a mark never moves back
    assert await backend.read(A, 8) == 0
    assert await backend.unread() == {B: 1}


async def test_recording_an_alert_again_changes_nothing_and_checked_only_grows(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    await backend.record(A, [alert(A, 3, title="first")], 4)
    assert await backend.record(A, [alert(A, 3, title="second")], 2) == 1
    assert await backend.checked(A) == 4
    assert [found.title for found in await backend.alerts(A, [3, 4])] == ["first"]


async def test_an_empty_record_marks_how_far_it_looked(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    assert await backend.record(A, [], 5) == 0
    assert await backend.checked(A) == 5 and await backend.unread() == {}


async def test_since_gives_the_newest_alerts_after_a_time_oldest_first(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    await backend.record(A, [alert(A, 1, NOW + 1), alert(A, 2, NOW + 3)], 3)
    await backend.record(B, [alert(B, 1, NOW + 2)], 2)
    assert [(a.session_id, a.seq) for a in await backend.since(NOW, 10)] == [
        (A, 1),
        (B, 1),
        (A, 2),
    ]
    assert [(a.session_id, a.seq) for a in await backend.since(NOW, 2)] == [(B, 1), (A, 2)]
    assert await backend.since(NOW + 3, 10) == [] and await backend.since(NOW, 0) == []
    assert await backend.alerts(A, [2, 1, 9]) == [alert(A, 1, NOW + 1), alert(A, 2, NOW + 3)]


async def test_forgetting_a_session_drops_its_alerts_and_its_mark(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    await backend.record(A, [alert(A, 1)], 2)
    await backend.read(A, 1)
    await backend.record(B, [alert(B, 1)], 2)
    await backend.forget(A)
    assert await backend.checked(A) is None and await backend.unread() == {B: 1}
    assert await backend.alerts(A, [1]) == []


async def test_everything_is_still_there_after_a_restart(
    store: Callable[[], AttentionBackend],
) -> None:
    first = store()
    await first.record(A, [alert(A, 3), alert(A, 7)], 8)
    await first.read(A, 4)
    await first.record(B, [], 2)
    await first.aclose()
    second = store()
    assert await second.checked(A) == 8 and await second.checked(B) == 2
    assert await second.unread() == {A: 1}
    assert await second.alerts(A, [3, 7]) == [alert(A, 3), alert(A, 7)]


async def test_read_alerts_older_than_a_day_may_go_but_counts_and_marks_stay(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    old = NOW - KEEP_READ_MS - 1
    await backend.record(A, [alert(A, 1, old), alert(A, 2, NOW), alert(A, 5, old)], 6)
    assert await backend.read(A, 3) == 1
    assert [a.seq for a in await backend.alerts(A, [1, 2, 5])] in ([2, 5], [1, 2, 5])
    assert await backend.unread() == {A: 1}


def test_each_store_kind_keeps_attention_beside_its_logs(tmp_path: Path) -> None:
    jsonl = attention_backend_for(JsonlBackend(tmp_path))
    assert isinstance(jsonl, JsonlAttentionBackend) and jsonl.path == tmp_path / "attention.jsonl"
    assert isinstance(attention_backend_for(MemoryBackend()), MemoryAttentionBackend)
    assert not jsonl.shared


async def test_an_alert_of_any_text_is_kept_with_nul_shown_as_a_replacement(
    store: Callable[[], AttentionBackend],
) -> None:
    """A reminder's prompt is the model's text: NUL, controls and bidi marks included.
    Every store keeps the alert (PostgreSQL's `text` refuses NUL: it reads U+FFFD)."""
    backend = store()
    hostile = "a\u0000b\u001b[2K\u202ec"
    made = Alert(A, 3, hostile, hostile, f"{A}/3", NOW)
    assert await backend.record(A, [made], 4) == 1
    (found,) = await backend.alerts(A, [3])
    shown = hostile.replace("\u0000", "\ufffd")
    assert found.title in (hostile, shown) and found.body in (hostile, shown)
    assert found.title.replace("\u0000", "\ufffd") == shown


async def test_records_give_everything_kept_per_session_to_copy_it_elsewhere(
    store: Callable[[], AttentionBackend],
) -> None:
    backend = store()
    assert await backend.records() == []
    await backend.record(B, [alert(B, 5), alert(B, 2)], 6)
    await backend.read(B, 3)
    await backend.read(A, 4)  # a read mark before anything was derived
    (only_read, both) = await backend.records()
    assert only_read == AttentionRecord(A, None, 4, ())
    assert both == AttentionRecord(B, 6, 3, (alert(B, 2), alert(B, 5)))
    copy = MemoryAttentionBackend()
    for record in await store().records():  # after a restart too
        if record.checked is not None:
            await copy.record(record.session_id, record.alerts, record.checked)
        await copy.read(record.session_id, record.read)
    assert await copy.records() == [only_read, both]
