"""`copy_store`: everything one store holds, into another, verified, resumable, never
overwriting — for JSONL → JSONL, JSONL → PostgreSQL and PostgreSQL → JSONL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from dsh.attention.alert import Alert
from dsh.attention.backends import attention_backend_for
from dsh.cli.transfer.copy import BATCH, CopyConflict, CopyMismatch, Side, copy_store
from dsh.persistence.backend import Backend, StoredSession
from dsh.persistence.backends import choose_backend
from dsh.persistence.errors import StorageError
from dsh.persistence.memory import MemoryBackend
from dsh.testing import FaultyBackend
from dsh.wake.backend import MemoryWakeBackend, WakeEntry
from dsh.wake.backends import wake_backend_for

from ...persistence.contract import events, header

pytestmark = pytest.mark.anyio

NOW = 1_800_000_000_000


class Steps:
    """A `Progress` that remembers what it was told."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []  # (phase, total, done)
        self.events = 0

    def start(self, what: str, total: int) -> None:
        self.seen.append((what, total, 0))

    def advance(self, events: int = 0) -> None:
        what, total, done = self.seen[-1]
        self.seen[-1] = (what, total, done + 1)
        self.events += events

    def finish(self) -> None:
        return None


Opener = Callable[[str], Awaitable[Side]]


@dataclass
class Pair:
    """Two stores of the kinds under test; `open(name)` opens one afresh (a new process)."""

    open: Opener
    opened: list[Side]

    async def side(self, name: str, backend: Callable[[Backend], Backend] | None = None) -> Side:
        side = await self.open(name)
        if backend is not None:
            side = replace(side, backend=backend(side.backend))
        self.opened.append(side)
        return side


@pytest.fixture(
    params=[
        ("jsonl", "jsonl"),
        pytest.param(("jsonl", "postgres"), marks=pytest.mark.pg),
        pytest.param(("postgres", "jsonl"), marks=pytest.mark.pg),
    ],
    ids=lambda kinds: "-to-".join(kinds),
)
async def pair(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Pair]:
    kinds = dict(zip(("src", "dst"), request.param, strict=True))
    urls = {
        name: request.getfixturevalue("pg_url")
        if kind == "postgres"
        else f"jsonl:{tmp_path / name}"
        for name, kind in kinds.items()
    }
    if "postgres" in kinds.values():  # each name its own schema
        urls = {
            name: url
            if kinds[name] != "postgres"
            else url.replace("&schema=t_", f"&schema={name}_")
            for name, url in urls.items()
        }

    async def open_side(name: str) -> Side:
        choice = choose_backend(urls[name], tmp_path, environ={})
        backend = choice.open()
        await backend.prepare()
        return Side(
            name, backend, wake_backend_for(choice, backend), attention_backend_for(backend)
        )

    made = Pair(open_side, [])
    yield made
    for side in made.opened:
        await side.backend.aclose()


def alert(session_id: str, seq: int) -> Alert:
    return Alert(session_id, seq, "stretch", "due 9:00", f"{session_id}/{seq}", NOW - 5)


async def fill(side: Side) -> None:
    """Three stored Sessions (one long, one a fork), one trashed, wake entries, alerts."""
    await side.backend.initialize(header("s1"), events(0, 3))
    await side.backend.initialize(header("s2"), [])
    await side.backend.append("s2", events(0, BATCH + 7))
    fork = header("s3", lineage={"parentId": "s1", "forkedAt": 2}, seedLength=3)
    await side.backend.initialize(fork, events(0, 2))
    await side.backend.initialize(header("gone"), events(0, 4))
    await side.backend.trash("gone")
    assert side.wake is not None
    await side.wake.replace({"s1": WakeEntry(NOW + 60_000), "s3": WakeEntry(None, dirty=True)})
    await side.attention.record("s1", [alert("s1", 1), alert("s1", 2)], 3)
    await side.attention.read("s1", 2)
    await side.attention.read("s2", 5)


async def contents(side: Side) -> dict[str, Any]:
    """Everything a store holds, comparable across backends."""

    def log(stored: StoredSession | None) -> tuple[str, list[bytes]] | None:
        if stored is None:
            return None
        return stored.header.canonical().to_json(), [event.to_bytes() for event in stored.events]

    ids = [summary.id for summary in await side.backend.list()]
    assert side.wake is not None
    return {
        "sessions": {sid: log(await side.backend.inspect(sid)) for sid in ids},
        "trash": {
            sid: log(await side.backend.inspect_trashed(sid))
            for sid in await side.backend.trashed()
        },
        "wake": (await side.wake.load()).entries,
        "attention": await side.attention.records(),
    }


async def test_everything_is_copied_and_a_second_run_changes_nothing(pair: Pair) -> None:
    src, dst = await pair.side("src"), await pair.side("dst")
    await fill(src)
    steps = Steps()
    report = await copy_store(src, dst, steps, now_ms=NOW)
    assert (report.sessions, report.trashed, report.written) == (3, 1, 4)
    assert report.events == 3 + BATCH + 7 + 2 + 4 == steps.events + 4
    assert (report.wake_entries, report.attention) == (2, 2)
    assert steps.seen == [("trash", 1, 1), ("sessions", 3, 3)]
    expected = await contents(src)
    assert expected["trash"]["gone"] is not None
    assert await contents(await pair.side("dst")) == expected
    again = await copy_store(src, await pair.side("dst"), Steps(), now_ms=NOW)
    assert not again.changed and again.events == 0
    assert await contents(await pair.side("dst")) == expected


async def test_a_copy_stopped_anywhere_continues_and_duplicates_nothing(pair: Pair) -> None:
    src = await pair.side("src")
    await fill(src)
    expected = await contents(src)
    # Stopped between a trashed log's creation and its trashing, then mid-log.
    dst = await pair.side("dst", FaultyBackend)
    assert isinstance(dst.backend, FaultyBackend)
    dst.backend.fail("trash", error=StorageError("the copy was stopped here"))
    with pytest.raises(StorageError, match="stopped here"):
        await copy_store(src, dst, Steps(), now_ms=NOW)
    assert [summary.id for summary in await dst.backend.list()] == ["gone"]
    dst = await pair.side("dst", FaultyBackend)
    assert isinstance(dst.backend, FaultyBackend)
    dst.backend.fail("append", session_id="s2", error=StorageError("stopped mid-log"))
    with pytest.raises(StorageError, match="mid-log"):
        await copy_store(src, dst, Steps(), now_ms=NOW)
    assert await dst.backend.cursor("s2") == BATCH  # its first batch is stored
    report = await copy_store(src, await pair.side("dst"), Steps(), now_ms=NOW)
    assert report.events == 7 + 2  # the rest of s2, then s3; nothing again
    assert await contents(await pair.side("dst")) == expected


async def test_a_source_that_grew_since_the_last_copy_gives_only_its_new_events(
    pair: Pair,
) -> None:
    src, dst = await pair.side("src"), await pair.side("dst")
    await fill(src)
    await copy_store(src, dst, Steps(), now_ms=NOW)
    await src.backend.append("s1", events(3, 5))
    await src.backend.initialize(header("s4"), events(0, 1))
    report = await copy_store(src, dst, Steps(), now_ms=NOW)
    assert (report.written, report.events) == (2, 3)
    assert await contents(await pair.side("dst")) == await contents(src)


async def test_another_log_under_the_same_id_is_refused_by_name_and_left_alone(
    pair: Pair,
) -> None:
    src, dst = await pair.side("src"), await pair.side("dst")
    await fill(src)
    await dst.backend.initialize(header("s2", createdAt=5), events(0, 1))
    with pytest.raises(CopyConflict, match="under session id s2") as refused:
        await copy_store(src, dst, Steps(), now_ms=NOW)
    assert "nothing was overwritten" in str(refused.value)
    assert [summary.id for summary in await dst.backend.list()] == ["s2"]  # nothing written
    assert await dst.backend.read("s2") == events(0, 1)


async def test_a_log_that_differs_inside_is_refused_when_it_is_reached(pair: Pair) -> None:
    src, dst = await pair.side("src"), await pair.side("dst")
    await fill(src)
    await dst.backend.initialize(header("s1"), events(0, 2, other=True))
    with pytest.raises(CopyConflict, match=r"another log \(event 0 differs\) under session id s1"):
        await copy_store(src, dst, Steps(), now_ms=NOW)
    assert await dst.backend.read("s1") == events(0, 2, other=True)


# From a JSONL source only: a shared (PostgreSQL) index is never missing — empty, it says
# no Session needs waking.
@pytest.mark.parametrize(
    "pair",
    [("jsonl", "jsonl"), pytest.param(("jsonl", "postgres"), marks=pytest.mark.pg)],
    ids=lambda kinds: "-to-".join(kinds),
    indirect=True,
)
async def test_a_source_without_a_wake_index_leaves_every_copied_session_to_derive(
    pair: Pair,
) -> None:
    src, dst = await pair.side("src"), await pair.side("dst")
    assert src.wake is not None and not src.wake.shared
    await src.backend.initialize(header("s1"), events(0, 1))
    await src.backend.initialize(header("s2"), events(0, 1))
    report = await copy_store(src, dst, Steps(), now_ms=NOW)
    assert dst.wake is not None
    dirty = WakeEntry(None, dirty=True)
    assert (await dst.wake.load()).entries == {"s1": dirty, "s2": dirty}
    assert len(report.notes) == 1 and "no wake index to copy" in report.notes[0]


async def test_a_jsonl_destination_with_sessions_of_its_own_and_no_index_rebuilds_it(
    tmp_path: Path,
) -> None:
    def side(name: str) -> Side:
        choice = choose_backend(f"jsonl:{tmp_path / name}", tmp_path, environ={})
        backend = choice.open()
        return Side(
            name, backend, wake_backend_for(choice, backend), attention_backend_for(backend)
        )

    src, dst = side("src"), side("dst")
    await fill(src)
    await dst.backend.initialize(header("mine"), events(0, 1))
    report = await copy_store(src, dst, Steps(), now_ms=NOW)
    assert dst.wake is not None and (await dst.wake.load()).problem is not None
    assert report.wake_entries == 0
    assert any("rebuilds the index from every log" in note for note in report.notes)
    for opened in (src, dst):
        await opened.backend.aclose()


class Forgetful(MemoryBackend):
    """A store that loses the last event of what it is asked to read back."""

    async def inspect(self, session_id: str) -> StoredSession | None:
        stored = await super().inspect(session_id)
        return None if stored is None else replace(stored, events=stored.events[:-1])


def memory_side(name: str, backend: Backend) -> Side:
    return Side(name, backend, MemoryWakeBackend(), attention_backend_for(backend))


async def test_a_log_that_reads_back_otherwise_stops_the_copy() -> None:
    src = memory_side("src", MemoryBackend())
    await src.backend.initialize(header("s1"), events(0, 3))
    with pytest.raises(CopyMismatch, match="s1 reads back from dst different from src at event 2"):
        await copy_store(src, memory_side("dst", Forgetful()), Steps(), now_ms=NOW)


async def test_read_alerts_older_than_a_day_are_not_carried() -> None:
    src = memory_side("src", MemoryBackend())
    dst = memory_side("dst", MemoryBackend())
    old = replace(alert("s1", 1), at=NOW - 2 * 86_400_000)
    await src.attention.record("s1", [old, alert("s1", 4)], 5)
    await src.attention.read("s1", 3)
    await copy_store(src, dst, Steps(), now_ms=NOW)
    (record,) = await dst.attention.records()
    assert (record.checked, record.read, record.alerts) == (5, 3, (alert("s1", 4),))
    assert not (await copy_store(src, dst, Steps(), now_ms=NOW)).changed


async def test_every_other_log_under_the_same_id_is_a_conflict_named_by_what_differs() -> None:
    async def refused(prepare: Callable[[Side, Side], Awaitable[None]]) -> str:
        src = memory_side("src", MemoryBackend())
        dst = memory_side("dst", MemoryBackend())
        await src.backend.initialize(header("s1"), events(0, 2))
        await prepare(src, dst)
        with pytest.raises(CopyConflict) as conflict:
            await copy_store(src, dst, Steps(), now_ms=NOW)
        return str(conflict.value)

    async def longer(src: Side, dst: Side) -> None:
        await dst.backend.initialize(header("s1"), events(0, 3))

    async def other_header(src: Side, dst: Side) -> None:
        await dst.backend.initialize(header("s1", cwd="/elsewhere"), events(0, 1))

    async def shorter_in_the_trash(src: Side, dst: Side) -> None:
        await src.backend.trash("s1")
        await dst.backend.initialize(header("s1"), events(0, 1))
        await dst.backend.trash("s1")

    async def stored_beside_the_trashed(src: Side, dst: Side) -> None:
        await src.backend.trash("s1")
        await src.backend.initialize(header("s1"), events(0, 1, stored=True))
        await dst.backend.initialize(header("s1"), events(0, 1, stored=True))

    assert "a longer log (3 events, not 2)" in await refused(longer)
    assert "another Session (another header)" in await refused(other_header)
    assert "a shorter log in its trash" in await refused(shorter_in_the_trash)
    assert "a stored Session under session id s1" in await refused(stored_beside_the_trashed)


class Headless(MemoryBackend):
    """A store that reads back another header, or nothing at all."""

    def __init__(self, lose: bool) -> None:
        super().__init__()
        self.lose = lose

    async def inspect(self, session_id: str) -> StoredSession | None:
        stored = await super().inspect(session_id)
        if stored is None or self.lose:
            return None
        return replace(stored, header=header(session_id, cwd="/changed"))


@pytest.mark.parametrize(
    ("lose", "said"), [(True, "not in dst after it was copied"), (False, "another header")]
)
async def test_a_log_that_does_not_read_back_as_written_stops_the_copy(
    lose: bool, said: str
) -> None:
    src = memory_side("src", MemoryBackend())
    await src.backend.initialize(header("s1"), events(0, 1))
    with pytest.raises(CopyMismatch, match=said):
        await copy_store(src, memory_side("dst", Headless(lose)), Steps(), now_ms=NOW)
