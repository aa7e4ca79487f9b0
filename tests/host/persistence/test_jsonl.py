from __future__ import annotations

import gc
import json
import logging
import os
import stat
import tempfile
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh.persistence import Backend, JsonlBackend
from dsh.persistence.backends import choose_backend
from dsh.persistence.errors import (
    CorruptLog,
    IntegrityError,
    LogChanged,
    SessionExists,
    SessionNotFound,
    StorageError,
)
from dsh.persistence.jsonl import index as line_index
from dsh.persistence.jsonl import logs, syncing
from dsh.session.errors import InvalidSessionId
from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh.testing import FaultyBackend
from tests.support import strategies
from tests.support.deadlines import WAIT

from .contract import BackendContract, events, header

pytestmark = pytest.mark.anyio


B = TypeVar("B", bound=Backend)
Opened = Callable[[B], B]


@pytest.fixture
async def opened() -> AsyncIterator[Opened]:
    """`opened(backend)` is `backend`, closed when the test ends: it keeps its logs open."""
    backends: list[Backend] = []

    def track(backend: B) -> B:
        backends.append(backend)
        return backend

    yield track
    for backend in backends:
        await backend.aclose()


class TestJsonlBackendContract(BackendContract):
    @pytest.fixture
    def backend(self, tmp_path: Path, opened: Opened) -> JsonlBackend:
        self.opened = opened
        return opened(JsonlBackend(tmp_path))

    async def reopen(self, backend: Backend) -> Backend:
        assert isinstance(backend, JsonlBackend)
        return self.opened(JsonlBackend(backend.directory.parent))


class TestJsonlBackendWithoutSidecarsContract(TestJsonlBackendContract):
    @pytest.fixture
    def backend(self, tmp_path: Path, opened: Opened) -> JsonlBackend:
        self.opened = opened
        return opened(JsonlBackend(tmp_path, sidecars=False))

    async def reopen(self, backend: Backend) -> Backend:
        assert isinstance(backend, JsonlBackend)
        return self.opened(JsonlBackend(backend.directory.parent, sidecars=False))


class TestJsonlBackendWithOneOpenLogContract(TestJsonlBackendContract):
    """Every other log closed after each call, so the contract holds across reopens."""

    @pytest.fixture
    def backend(self, tmp_path: Path, opened: Opened) -> JsonlBackend:
        self.opened = opened
        return opened(JsonlBackend(tmp_path, max_open_logs=1))

    async def reopen(self, backend: Backend) -> Backend:
        assert isinstance(backend, JsonlBackend)
        return self.opened(JsonlBackend(backend.directory.parent, max_open_logs=1))


@pytest.fixture
def backend(tmp_path: Path, opened: Opened) -> JsonlBackend:
    return opened(JsonlBackend(tmp_path))


def log_path(tmp_path: Path, session_id: str = "s1") -> Path:
    return tmp_path / "sessions" / f"{session_id}.jsonl"


def tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


# -- the public format -----------------------------------------------------------


async def test_a_log_is_a_canonical_header_line_then_one_line_per_event(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    prefix = events(0, 2)
    await backend.initialize(header(), prefix)
    await backend.append("s1", events(2, 3))
    assert backend.path_of("s1") == log_path(tmp_path)
    raw = log_path(tmp_path).read_bytes()
    lines = raw.decode("utf-8").split("\n")
    assert lines[-1] == ""
    assert json.loads(lines[0]) == {**json.loads(header().to_json()), "delegationDepth": 0}
    assert lines[0] == header().canonical().to_json()
    assert lines[1:-1] == [event.to_json() for event in events(0, 3)]
    assert "✓".encode() in raw  # UTF-8, not \u escapes


json_values = strategies.json_values(max_leaves=12, max_size=3, key_size=None)


@settings(max_examples=50, deadline=None)
@given(data=st.lists(json_values, min_size=1, max_size=5))
def test_every_stored_line_is_exactly_the_events_public_json(data: list[Any]) -> None:
    batch = [
        SessionEvent(seq=seq, type="test/data", time=seq, data=value)
        for seq, value in enumerate(data)
    ]

    async def write_and_read(directory: str) -> bytes:
        backend = JsonlBackend(directory)
        await backend.initialize(header(), batch[:1])
        await backend.append("s1", batch[1:])
        await backend.aclose()
        return backend.path_of("s1").read_bytes()

    with tempfile.TemporaryDirectory() as directory:
        raw = anyio.run(write_and_read, directory)
    lines = raw.decode("utf-8").split("\n")
    assert lines[1:] == [*(event.to_json() for event in batch), ""]


async def test_creation_is_atomic_through_a_hidden_temp_file(
    opened: Opened, tmp_path: Path
) -> None:
    seen: list[tuple[bool, list[str]]] = []

    def sync(fd: int) -> None:
        is_directory = stat.S_ISDIR(os.fstat(fd).st_mode)
        seen.append((is_directory, tree(tmp_path)))
        os.fsync(fd)

    backend = opened(JsonlBackend(tmp_path, sync=sync))
    await backend.initialize(header(), events(0, 3))

    # the new `sessions` directory made durable in its parent, then the temp file's
    # data, then the directory entry of the final name: never a partial visible log
    assert [is_directory for is_directory, _ in seen] == [True, False, True]
    before_link = seen[1][1]
    assert "sessions/s1.jsonl" not in before_link
    assert [name for name in before_link if name.startswith("sessions/.s1.jsonl.")]
    assert seen[2][1] == ["sessions", "sessions/s1.jsonl"]
    assert tree(tmp_path) == ["sessions", "sessions/s1.jsonl"]
    assert await backend.list() != []


@pytest.mark.parametrize("after_write", [False, True])
async def test_a_creation_that_fails_before_the_link_leaves_nothing_behind(
    opened: Opened, tmp_path: Path, after_write: bool
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path))
    backend.fail("sync", nth=2, after_write=after_write)  # nth=1 syncs the new directory
    with pytest.raises(StorageError, match="injected fault"):
        await backend.initialize(header(), events(0, 2))
    assert tree(tmp_path) == ["sessions"]
    assert await backend.cursor("s1") is None
    await backend.initialize(header(), events(0, 2))
    assert await backend.cursor("s1") == 2


async def test_a_creation_that_fails_after_the_link_has_committed(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path))
    backend.fail("sync", nth=3)  # the directory fsync after the link
    with pytest.raises(StorageError, match="injected fault"):
        await backend.initialize(header(), events(0, 2))
    assert await backend.cursor("s1") == 2
    with pytest.raises(SessionExists):
        await backend.initialize(header(), events(0, 2))


async def test_a_lost_race_to_create_reports_the_session_as_existing(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header("other"), [])
    real_link = os.link

    def racing_link(source: str, target: str) -> None:
        log_path(tmp_path).write_bytes(b"someone else\n")
        real_link(source, target)

    monkeypatch.setattr(os, "link", racing_link)
    with pytest.raises(SessionExists):
        await backend.initialize(header(), events(0, 1))
    assert log_path(tmp_path).read_bytes() == b"someone else\n"
    assert tree(tmp_path) == ["sessions", "sessions/other.jsonl", "sessions/s1.jsonl"]


async def test_the_refusal_of_a_stored_session_is_freed_without_a_collection(
    backend: JsonlBackend,
) -> None:
    # Every resume of a stored Session meets this refusal: raised in the I/O
    # worker, it sat in a cycle with the awaiting frame, and the heap policy
    # froze it (and the frames) for good.
    await backend.initialize(header(), events(0, 1))
    gc.disable()
    try:
        try:
            await backend.initialize(header(), events(0, 1))
        except SessionExists as error:
            assert "session s1 is already stored" in str(error)
            refusal = weakref.ref(error)
        assert refusal() is None
    finally:
        gc.enable()


async def test_an_unwritable_data_directory_is_a_storage_error_naming_the_file(
    opened: Opened,
    tmp_path: Path,
) -> None:
    (tmp_path / "sessions").write_text("not a directory")
    backend = opened(JsonlBackend(tmp_path))
    with pytest.raises(StorageError, match=r"cannot create .*s1\.jsonl"):
        await backend.initialize(header(), [])


# -- torn tails ---------------------------------------------------------------------

TORN_TAILS = [
    pytest.param(b'{"seq":3,"type":"message/us', id="no-newline"),
    pytest.param(b'{"seq":3,"type":"message/us\n', id="invalid-json-line"),
    pytest.param(b'{"seq":3,"type":"message/user","time":1,"data":"\xe2\x9c', id="split-utf8"),
    pytest.param(b"\n", id="empty-last-line"),
    pytest.param(events(3, 4)[0].to_json().encode(), id="complete-json-without-newline"),
]


@pytest.mark.parametrize("tail", TORN_TAILS)
async def test_readers_ignore_a_torn_tail_without_changing_the_file(
    backend: JsonlBackend, tmp_path: Path, tail: bytes
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    with log_path(tmp_path).open("ab") as file:
        file.write(tail)
    before = log_path(tmp_path).read_bytes()

    stored = await backend.inspect("s1")
    assert stored is not None
    assert stored.torn_tail is True
    assert stored.events == tuple(events(0, 3))
    assert await backend.cursor("s1") == 3
    assert [summary.length for summary in await backend.list()] == [3]
    assert log_path(tmp_path).read_bytes() == before


@pytest.mark.parametrize("tail", TORN_TAILS)
async def test_the_next_writer_truncates_a_torn_tail_before_appending(
    opened: Opened, tmp_path: Path, tail: bytes
) -> None:
    await opened(JsonlBackend(tmp_path)).initialize(header(), events(0, 3))
    with log_path(tmp_path).open("ab") as file:
        file.write(tail)
    backend = opened(JsonlBackend(tmp_path))
    await backend.append("s1", events(3, 5))
    stored = await backend.inspect("s1")
    assert stored is not None
    assert stored.torn_tail is False
    assert stored.events == tuple(events(0, 5))
    assert log_path(tmp_path).read_bytes().endswith(events(4, 5)[0].to_json().encode() + b"\n")


# -- corruption -------------------------------------------------------------------


def corrupt(tmp_path: Path, line_number: int, replacement: bytes) -> None:
    lines = log_path(tmp_path).read_bytes().split(b"\n")
    lines[line_number - 1] = replacement
    log_path(tmp_path).write_bytes(b"\n".join(lines))


CORRUPTIONS = [
    pytest.param(3, b"{not json", "invalid event", id="middle-not-json"),
    pytest.param(3, b'{"seq":1}', "invalid event", id="middle-missing-keys"),
    pytest.param(3, events(0, 1)[0].to_json().encode(), "seq 0 where 1 belongs", id="duplicate"),
    pytest.param(
        4, b'{"seq":2,"type":"x","time":1,"data":1}', "invalid event", id="last-valid-json"
    ),
    pytest.param(1, b"{oops", "invalid header", id="header-not-json"),
    pytest.param(1, header("other").to_json().encode(), "names session other", id="header-id"),
    pytest.param(1, b"", "invalid header", id="header-empty"),
]


@pytest.mark.parametrize(("line", "replacement", "reason"), CORRUPTIONS)
async def test_a_malformed_line_that_is_not_a_torn_tail_is_corruption(
    opened: Opened, tmp_path: Path, line: int, replacement: bytes, reason: str
) -> None:
    await opened(JsonlBackend(tmp_path)).initialize(header(), events(0, 3))
    corrupt(tmp_path, line, replacement)
    before = log_path(tmp_path).read_bytes()
    backend = opened(JsonlBackend(tmp_path))

    for read in (backend.inspect, backend.cursor):
        with pytest.raises(CorruptLog) as info:
            await read("s1")
        assert info.value.line == line
        assert reason in info.value.reason
        assert info.value.path == str(log_path(tmp_path))
        assert f"s1.jsonl: line {line}: " in str(info.value)
    with pytest.raises(CorruptLog):
        await backend.append("s1", events(3, 4))
    assert log_path(tmp_path).read_bytes() == before


@pytest.mark.parametrize("content", [b"", header().to_json().encode()])
async def test_a_log_without_a_complete_header_line_is_corruption(
    opened: Opened, tmp_path: Path, content: bytes
) -> None:
    log_path(tmp_path).parent.mkdir()
    log_path(tmp_path).write_bytes(content)
    with pytest.raises(CorruptLog, match="line 1: no header line"):
        await opened(JsonlBackend(tmp_path)).inspect("s1")


async def test_list_skips_a_corrupt_header_and_says_so_once(
    opened: Opened, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await opened(JsonlBackend(tmp_path)).initialize(header(), [])
    await opened(JsonlBackend(tmp_path)).initialize(header("s2"), [])
    corrupt(tmp_path, 1, b"{}")
    backend = opened(JsonlBackend(tmp_path))
    with caplog.at_level(logging.WARNING, logger="dsh.persistence.jsonl"):
        assert [summary.id for summary in await backend.list()] == ["s2"]
        assert [summary.id for summary in await backend.list()] == ["s2"]
    skipped = [record.getMessage() for record in caplog.records]
    assert len(skipped) == 1
    assert "s1.jsonl" in skipped[0] and "line 1: invalid header" in skipped[0]


async def test_list_ignores_files_that_are_not_logs(backend: JsonlBackend, tmp_path: Path) -> None:
    await backend.initialize(header(), [])
    directory = tmp_path / "sessions"
    for name in [".s2.jsonl.abc.tmp", "notes.txt", "-bad.jsonl", "s3.jsonl.bak", "s4.json"]:
        (directory / name).write_text("junk")
    assert [summary.id for summary in await backend.list()] == ["s1"]


def followups(start: int, stop: int) -> list[SessionEvent]:
    source = {"kind": "schedule", "scheduleId": "rem-1"}
    return events(start, stop, source=source)


async def test_a_cold_summary_decodes_no_follow_up_that_cannot_be_the_persons(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await opened(JsonlBackend(tmp_path, sidecars=False)).initialize(header(), followups(0, 50))
    decoded = count_decodes(monkeypatch, line_index)
    person = {"text": "hello", "source": {"kind": "user"}}
    tail = [*followups(50, 52), SessionEvent(seq=52, type="message/user", time=1, data=person)]
    backend = opened(JsonlBackend(tmp_path, sidecars=False))
    [summary] = await backend.list()
    assert (summary.length, summary.preview, decoded) == (50, None, [])
    await backend.append("s1", tail)
    [summary] = await opened(JsonlBackend(tmp_path, sidecars=False)).list()
    assert (summary.length, summary.preview, decoded) == (53, "hello", [52])


async def test_the_persons_kind_spelled_with_escapes_is_still_the_preview(
    opened: Opened, tmp_path: Path
) -> None:
    await opened(JsonlBackend(tmp_path)).initialize(header(), followups(0, 1))
    foreign = rb'{"seq":1,"type":"message/user","time":2,"data":{"text":"hi","source":'
    with log_path(tmp_path).open("ab") as file:
        file.write(foreign + rb'{"kind":"\u0075ser"}}}' + b"\n")
    [summary] = await opened(JsonlBackend(tmp_path)).list()
    assert (summary.length, summary.preview) == (2, "hi")


# -- ids and paths -------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["../escape", "../sessions/../escape", "/tmp/escape", ".."])
async def test_traversal_ids_never_reach_the_filesystem(
    opened: Opened, tmp_path: Path, bad: str
) -> None:
    data = tmp_path / "data"
    outside = tmp_path / "escape.jsonl"
    outside.write_text(header("escape").to_json() + "\n")
    backend = opened(JsonlBackend(data))
    with pytest.raises(InvalidSessionId):
        backend.path_of(bad)
    with pytest.raises(InvalidSessionId):
        await backend.inspect(bad)
    with pytest.raises(InvalidSessionId):
        await backend.cursor(bad)
    with pytest.raises(InvalidSessionId):
        await backend.append(bad, events(0, 1))
    with pytest.raises(InvalidSessionId):
        await backend.initialize(header().model_copy(update={"id": bad}), events(0, 1))
    assert tree(tmp_path) == ["escape.jsonl"]
    assert outside.read_text() == header("escape").to_json() + "\n"


# -- the cached writer -----------------------------------------------------------------


@pytest.mark.parametrize("closed", [False, True], ids=["open", "closed past max_open_logs"])
async def test_a_log_changed_behind_the_writers_back_is_refused_once_then_re_read(
    opened: Opened, tmp_path: Path, closed: bool
) -> None:
    first = opened(JsonlBackend(tmp_path, max_open_logs=1))
    second = opened(JsonlBackend(tmp_path))
    await first.initialize(header(), events(0, 1))
    await first.append("s1", events(1, 2))
    before = await first.mark("s1")
    if closed:
        await first.initialize(header("s2"), events(0, 1))
        assert open_logs(tmp_path) == ["s2.jsonl"]
    await second.append("s1", events(2, 3))
    with pytest.raises(LogChanged, match=r"s1: .*s1\.jsonl changed since this process last wrote"):
        await first.append("s1", events(3, 4))
    with pytest.raises(IntegrityError) as info:
        await first.append("s1", events(2, 3))
    assert info.value.expected == 3
    after = await first.mark("s1")
    assert before is not None and after is not None
    assert (after.length, after.incarnation != before.incarnation) == (3, True)
    await first.append("s1", events(3, 4))
    stored = await second.inspect("s1")
    assert stored is not None
    assert stored.events == tuple(events(0, 4))


async def test_an_edit_of_an_idle_log_changes_its_incarnation(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    await backend.initialize(header(), events(0, 3))
    first = await backend.mark("s1")
    assert first == await backend.mark("s1")
    corrupt(tmp_path, 3, events(1, 2, edited=True)[0].to_json().encode())
    second = await backend.mark("s1")
    assert first is not None and second is not None
    assert second.incarnation != first.incarnation
    assert (await backend.read("s1", 1, 2))[0].data["edited"] is True


async def test_a_deleted_log_is_noticed(backend: JsonlBackend, tmp_path: Path) -> None:
    await backend.initialize(header(), events(0, 1))
    log_path(tmp_path).unlink()
    assert await backend.cursor("s1") is None
    with pytest.raises(SessionNotFound):
        await backend.append("s1", events(1, 2))
    await backend.initialize(header(), [])
    assert await backend.cursor("s1") == 0


def open_logs(tmp_path: Path) -> list[str]:
    """The names of the logs under `tmp_path` this process holds open."""
    # By inode, not by name: a new log's descriptor was opened on its temp file.
    logs = {}
    for path in (tmp_path / "sessions").glob("*.jsonl"):
        status = path.stat()
        logs[status.st_dev, status.st_ino] = path.name
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            status = os.stat(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        name = logs.get((status.st_dev, status.st_ino))
        if name is not None:
            names.append(name)
    return sorted(names)


async def test_release_closes_the_open_log(backend: JsonlBackend, tmp_path: Path) -> None:
    await backend.initialize(header(), events(0, 1))
    await backend.append("s1", events(1, 2))
    assert open_logs(tmp_path) == ["s1.jsonl"]
    await backend.release("s1")
    assert open_logs(tmp_path) == []
    await backend.append("s1", events(2, 3))
    assert open_logs(tmp_path) == ["s1.jsonl"]
    await backend.aclose()
    assert open_logs(tmp_path) == []


# -- at most `max_open_logs` open ----------------------------------------------------------


def ids(count: int) -> list[str]:
    return [f"s{number}" for number in range(count)]


async def test_past_max_open_logs_the_least_recently_used_log_is_closed(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(JsonlBackend(tmp_path, max_open_logs=2))
    for session_id in ids(4):
        await backend.initialize(header(session_id), events(0, 1))
    assert open_logs(tmp_path) == ["s2.jsonl", "s3.jsonl"]
    await backend.append("s2", events(1, 2))  # s2 is now the most recent
    await backend.append("s0", events(1, 2))
    assert open_logs(tmp_path) == ["s0.jsonl", "s2.jsonl"]
    for session_id, length in zip(ids(4), [2, 1, 2, 1], strict=True):
        await backend.append(session_id, events(length, 3))
    for session_id in ids(4):
        assert await backend.cursor(session_id) == 3
        assert list(await backend.read(session_id)) == events(0, 3)
    assert len(open_logs(tmp_path)) == 2


async def test_a_closed_logs_reopen_keeps_its_index_and_incarnation(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(JsonlBackend(tmp_path, max_open_logs=1))
    await backend.initialize(header("s1"), events(0, 3))
    before = await backend.mark("s1")
    await backend.initialize(header("s2"), events(0, 1))
    assert open_logs(tmp_path) == ["s2.jsonl"]
    assert await backend.mark("s1") == before  # read through the index it left
    await backend.append("s1", events(3, 4))
    after = await backend.mark("s1")
    assert before is not None and after is not None
    assert (after.length, after.incarnation) == (4, before.incarnation)


async def test_a_closed_log_deleted_meanwhile_is_not_found_then_made_anew(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(JsonlBackend(tmp_path, max_open_logs=1))
    await backend.initialize(header("s1"), events(0, 2))
    await backend.initialize(header("s2"), events(0, 1))
    log_path(tmp_path, "s1").unlink()
    with pytest.raises(SessionNotFound):
        await backend.append("s1", events(2, 3))
    await backend.initialize(header("s1"), events(0, 1))
    await backend.append("s1", events(1, 2))
    assert list(await backend.read("s1")) == events(0, 2)


async def test_a_round_larger_than_max_open_logs_holds_its_files_until_it_ends(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(JsonlBackend(tmp_path, max_open_logs=2))
    for session_id in ids(6):
        await backend.initialize(header(session_id), events(0, 1))
    async with anyio.create_task_group() as group:
        for session_id in ids(6):
            group.start_soon(backend.append, session_id, events(1, 3))
    assert len(open_logs(tmp_path)) == 2
    for session_id in ids(6):
        assert list(await backend.read(session_id)) == events(0, 3)


async def test_a_closed_long_log_leaves_its_sidecar(opened: Opened, tmp_path: Path) -> None:
    backend = opened(JsonlBackend(tmp_path, max_open_logs=1))
    await backend.initialize(header("s1"), events(0, LONG))
    assert not sidecar(tmp_path).exists()
    await backend.initialize(header("s2"), events(0, 1))
    assert sidecar(tmp_path).exists()


async def test_a_broken_writer_is_dropped_rather_than_closed_with_its_index(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path, max_open_logs=1))
    await backend.initialize(header("s1"), events(0, 2))
    backend.fail("sync", times=2)  # the append's fsync and the roll-back's: s1 is broken
    with pytest.raises(StorageError):
        await backend.append("s1", events(2, 3))
    await backend.initialize(header("s2"), events(0, 1))
    assert open_logs(tmp_path) == ["s2.jsonl"]
    await backend.append("s1", events(2, 3))
    assert list(await backend.read("s1")) == events(0, 3)


async def test_the_open_logs_setting_bounds_the_logs_the_backend_holds_open(
    tmp_path: Path,
) -> None:
    backend = choose_backend("jsonl:?open_logs=1", tmp_path, environ={}).open()
    try:
        for session_id in ("s1", "s2", "s3"):
            await backend.initialize(header(session_id), events(0, 1))
        assert open_logs(tmp_path) == ["s3.jsonl"]
    finally:
        await backend.aclose()


def test_max_open_logs_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="max_open must be at least 1, not 0"):
        JsonlBackend(tmp_path, max_open_logs=0)


# -- failed appends ----------------------------------------------------------------------


@pytest.mark.parametrize("after_write", [False, True])
async def test_a_failed_fsync_rolls_the_append_back(
    opened: Opened, tmp_path: Path, after_write: bool
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path))
    await backend.initialize(header(), events(0, 2))
    before = log_path(tmp_path).read_bytes()
    backend.fail("sync", after_write=after_write)
    with pytest.raises(StorageError, match=r"cannot append to .*s1\.jsonl: .*injected fault"):
        await backend.append("s1", events(2, 4))
    assert log_path(tmp_path).read_bytes() == before
    assert await backend.cursor("s1") == 2
    await backend.append("s1", events(2, 4))
    assert await backend.cursor("s1") == 4


async def test_when_the_roll_back_cannot_be_synced_the_log_is_re_read(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path))
    await backend.initialize(header(), events(0, 2))
    backend.fail("sync", times=2)  # the append's fsync and the roll-back's
    with pytest.raises(StorageError):
        await backend.append("s1", events(2, 3))
    assert await backend.cursor("s1") == 2
    await backend.append("s1", events(2, 4))
    stored = await backend.inspect("s1")
    assert stored is not None
    assert stored.events == tuple(events(0, 4))


async def test_when_the_roll_back_cannot_truncate_the_cursor_tells_the_truth(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path))
    await backend.initialize(header(), events(0, 2))
    backend.fail("sync")

    def broken_truncate(fd: int, size: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "ftruncate", broken_truncate)
    with pytest.raises(StorageError):
        await backend.append("s1", events(2, 3))
    monkeypatch.undo()
    # the un-synced batch is still readable, so the next cursor counts it: a caller
    # reconciling with the cursor does not write it twice
    assert await backend.cursor("s1") == 3
    await backend.append("s1", events(3, 4))
    stored = await backend.inspect("s1")
    assert stored is not None
    assert stored.events == tuple(events(0, 4))


async def test_a_failed_write_rolls_back_a_partial_batch(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 1))
    before = log_path(tmp_path).read_bytes()
    real_write = os.write
    calls: list[int] = []

    def short_then_full_disk(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:10]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_full_disk)
    with pytest.raises(StorageError, match="No space left"):
        await backend.append("s1", events(1, 3))
    monkeypatch.undo()
    assert len(calls) == 2
    assert log_path(tmp_path).read_bytes() == before
    await backend.append("s1", events(1, 3))
    assert await backend.cursor("s1") == 3


async def test_short_writes_are_completed(
    backend: JsonlBackend, opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), [])
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:7])))
    await backend.append("s1", events(0, 3))
    monkeypatch.undo()
    stored = await opened(JsonlBackend(tmp_path)).inspect("s1")
    assert stored is not None
    assert stored.events == tuple(events(0, 3))


async def test_a_directory_where_the_log_should_be_is_refused(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    log_path(tmp_path).parent.mkdir()
    log_path(tmp_path).mkdir()
    for call in (backend.inspect, backend.cursor, backend.header, backend.read):
        with pytest.raises(StorageError, match=r"refusing .*s1\.jsonl: it is a directory"):
            await call("s1")
    with pytest.raises(StorageError, match=r"refusing .*s1\.jsonl: it is a directory"):
        await backend.append("s1", events(0, 1))


async def test_concurrent_appends_to_one_session_are_serialised(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(JsonlBackend(tmp_path))
    await backend.initialize(header(), [])
    batches = [events(start, start + 3) for start in range(0, 30, 3)]
    results: list[BaseException | None] = []

    async def append(batch: list[SessionEvent]) -> None:
        try:
            await backend.append("s1", batch)
            results.append(None)
        except IntegrityError as error:
            results.append(error)

    async with anyio.create_task_group() as group:
        for batch in batches:
            group.start_soon(append, batch)
    stored = await backend.inspect("s1")
    assert stored is not None
    # whatever order they ran in, the log is a clean prefix and every refusal was clean
    assert stored.events == tuple(events(0, len(stored.events)))
    assert results.count(None) == len(stored.events) // 3


async def test_a_failure_that_is_not_an_os_error_still_rolls_back(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(FaultyBackend.jsonl(tmp_path))
    await backend.initialize(header(), events(0, 1))
    backend.fail("sync", error=RuntimeError("sync hook broke"))
    with pytest.raises(RuntimeError, match="sync hook broke"):
        await backend.append("s1", events(1, 2))
    assert await backend.cursor("s1") == 1
    assert len(log_path(tmp_path).read_bytes().splitlines()) == 2


async def test_release_while_others_wait_keeps_the_session_usable(
    opened: Opened, tmp_path: Path
) -> None:
    backend = opened(JsonlBackend(tmp_path))
    await backend.initialize(header(), [])
    async with anyio.create_task_group() as group:
        group.start_soon(backend.append, "s1", events(0, 2))
        await anyio.lowlevel.checkpoint()
        group.start_soon(backend.release, "s1")
        group.start_soon(backend.append, "s1", events(2, 4))
    await backend.release("s1")
    stored = await backend.inspect("s1")
    assert stored is not None
    assert stored.events == tuple(events(0, 4))


async def test_list_skips_a_log_deleted_while_listing(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), [])
    real_listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path: [*real_listdir(path), "gone.jsonl"])
    assert [summary.id for summary in await backend.list()] == ["s1"]


# -- what is remembered --------------------------------------------------------------


def count_scans(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every full scan of a log (what the index and the memo save)."""
    from dsh.persistence.jsonl import index

    scanned: list[Path] = []
    real_build = index.build

    def build(path: Path, *args: Any, **kwargs: Any) -> Any:
        scanned.append(path)
        return real_build(path, *args, **kwargs)

    monkeypatch.setattr(index, "build", build)
    return scanned


def count_decodes(monkeypatch: pytest.MonkeyPatch, module: ModuleType = logs) -> list[int]:
    """Record the seq of every event line `module` decodes (the log files', by default)."""
    decoded: list[int] = []
    real_parse = module.parse_event

    def parse_event(path: Path, seq: int, raw: bytes) -> SessionEvent:
        decoded.append(seq)
        return real_parse(path, seq, raw)

    monkeypatch.setattr(module, "parse_event", parse_event)
    return decoded


async def test_inspect_returns_the_held_result_while_the_log_is_unchanged(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    scanned = count_scans(monkeypatch)

    first = await backend.inspect("s1")
    again = await backend.inspect("s1")

    assert again is first
    assert len(scanned) == 1


async def test_a_held_result_names_the_incarnation_the_backend_sees_now(
    backend: JsonlBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    first = await backend.inspect("s1")
    assert first is not None and first.mark is not None
    # The backend stops recognising this state (its table of incarnations evicted it):
    # the same bytes now stand for a new incarnation, and a held read must say so.
    backend._files._incarnations.forget("s1")
    scanned = count_scans(monkeypatch)
    again = await backend.inspect("s1")
    assert again is not None and again.mark == await backend.mark("s1")
    assert again.mark is not None and again.mark.incarnation != first.mark.incarnation
    assert again.events is first.events and scanned == []


async def test_a_result_nobody_holds_is_read_again(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    scanned = count_scans(monkeypatch)

    first = await backend.inspect("s1")
    assert first is not None
    del first
    second = await backend.inspect("s1")

    assert second is not None and second.events == tuple(events(0, 3))
    assert len(scanned) == 2


async def test_a_log_that_changed_since_it_was_read_is_read_again(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    held = await backend.inspect("s1")
    assert held is not None
    # Rewritten behind the backend's back, same size, at a later time.
    corrupt(tmp_path, 3, b"{" + b" " * (len(events(1, 2)[0].to_json()) - 2) + b"}")
    later = os.stat(log_path(tmp_path)).st_mtime_ns + 10_000_000_000
    os.utime(log_path(tmp_path), ns=(later, later))

    with pytest.raises(CorruptLog):
        await backend.inspect("s1")
    with pytest.raises(CorruptLog):
        await backend.cursor("s1")


async def test_cursor_reads_and_the_next_append_reuse_one_scan_of_the_same_log(
    backend: JsonlBackend, opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    scanned = count_scans(monkeypatch)
    fresh = opened(JsonlBackend(tmp_path))

    assert await fresh.cursor("s1") == 3
    assert await fresh.cursor("s1") == 3
    assert await fresh.read("s1", 1, 2) == events(1, 2)
    assert await fresh.header("s1") == header(delegationDepth=0)
    await fresh.append("s1", events(3, 4))
    assert await fresh.cursor("s1") == 4

    assert len(scanned) == 1
    stored = await fresh.inspect("s1")
    assert stored is not None and stored.events == tuple(events(0, 4))


@pytest.mark.parametrize("tail", TORN_TAILS)
async def test_a_remembered_torn_tail_is_still_truncated_before_appending(
    backend: JsonlBackend, tmp_path: Path, tail: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    with log_path(tmp_path).open("ab") as file:
        file.write(tail)
    scanned = count_scans(monkeypatch)
    held = await backend.inspect("s1")
    assert held is not None and held.torn_tail is True

    await backend.append("s1", events(3, 5))

    assert len(scanned) == 1
    stored = await backend.inspect("s1")
    assert stored is not None and stored.torn_tail is False
    assert stored.events == tuple(events(0, 5))


async def test_only_the_most_recent_indexes_are_remembered(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for session_id in ("s1", "s2", "s3"):
        await opened(JsonlBackend(tmp_path)).initialize(header(session_id), events(0, 1))
    backend = opened(JsonlBackend(tmp_path, max_index_lines=2))
    scanned = count_scans(monkeypatch)
    for session_id in ("s1", "s2", "s3"):
        assert await backend.cursor(session_id) == 1

    assert await backend.cursor("s3") == 1  # remembered
    assert await backend.cursor("s1") == 1  # forgotten: the oldest of three
    assert len(scanned) == 4


async def test_a_ranged_read_decodes_only_the_events_it_returns(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mixed = [
        SessionEvent(seq=seq, type="a/x" if seq % 10 == 0 else "b/y", time=seq, data={"n": seq})
        for seq in range(200)
    ]
    await backend.initialize(header(), mixed)
    decoded = count_decodes(monkeypatch)

    assert [event.seq for event in await backend.read("s1", 50, 53)] == [50, 51, 52]
    assert [event.seq for event in await backend.read("s1", 95, types={"a/x"})] == [
        100,
        110,
        120,
        130,
        140,
        150,
        160,
        170,
        180,
        190,
    ]
    assert await backend.cursor("s1") == 200
    assert (await backend.list())[0].length == 200
    assert decoded == [50, 51, 52, 100, 110, 120, 130, 140, 150, 160, 170, 180, 190]


async def test_lines_written_by_hand_are_read_like_canonical_ones(
    opened: Opened, tmp_path: Path
) -> None:
    lines = [
        header().canonical().to_json(),
        '{"seq":0,"type":"message/user","time":1,"data":{"text":"canonical"}}',
        '{ "type": "note/hand", "seq": 1, "time": 2, "data": {"text": "by hand"} }',
        '{"seq":2,"type":"message/user","time":3,"data":{"text":"canonical again"}}',
    ]
    log_path(tmp_path).parent.mkdir()
    log_path(tmp_path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    backend = opened(JsonlBackend(tmp_path))
    assert await backend.cursor("s1") == 3
    assert [event.seq for event in await backend.read("s1", types={"note/hand"})] == [1]
    assert [event.seq for event in await backend.read("s1", types={"message/user"})] == [0, 2]


# -- the sidecar index ------------------------------------------------------------------


LONG = 1_500


async def long_session(tmp_path: Path, length: int = LONG) -> JsonlBackend:
    """A released Session of `length` events, written through a backend (which leaves
    a sidecar index)."""
    backend = JsonlBackend(tmp_path)
    await backend.initialize(header(), events(0, length))
    await backend.release("s1")
    return backend


def sidecar(tmp_path: Path) -> Path:
    return tmp_path / "sessions" / ".s1.jsonl.idx"


async def test_a_long_log_leaves_a_private_sidecar_index_that_is_never_listed(
    tmp_path: Path,
) -> None:
    backend = await long_session(tmp_path)
    assert sidecar(tmp_path).exists()
    assert stat.S_IMODE(sidecar(tmp_path).stat().st_mode) == 0o600
    assert [summary.id for summary in await backend.list()] == ["s1"]


async def test_a_restarted_backend_reads_a_page_through_the_sidecar_without_a_scan(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await long_session(tmp_path)
    scanned = count_scans(monkeypatch)
    decoded = count_decodes(monkeypatch)
    fresh = opened(JsonlBackend(tmp_path))

    assert await fresh.read("s1", 1_000, 1_002) == events(1_000, 1_002)
    assert await fresh.cursor("s1") == LONG
    assert (await fresh.list())[0].length == LONG

    assert scanned == []
    assert decoded == [1_000, 1_001]


async def test_a_deleted_sidecar_is_rebuilt_from_the_log(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await long_session(tmp_path)
    sidecar(tmp_path).unlink()
    scanned = count_scans(monkeypatch)
    fresh = opened(JsonlBackend(tmp_path))
    assert await fresh.read("s1", 7, 8) == events(7, 8)
    assert len(scanned) == 1
    assert sidecar(tmp_path).exists()


async def test_a_sidecar_of_a_log_that_grew_since_is_extended(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await long_session(tmp_path)
    with log_path(tmp_path).open("ab") as file:  # appended after the sidecar was written
        file.write(b"".join(event.to_json().encode() + b"\n" for event in events(LONG, LONG + 3)))
    scanned = count_scans(monkeypatch)
    fresh = opened(JsonlBackend(tmp_path))
    assert await fresh.cursor("s1") == LONG + 3
    assert await fresh.read("s1", LONG + 1) == events(LONG + 1, LONG + 3)
    assert scanned == []


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "other-log", "rewritten-in-place"],
)
async def test_a_sidecar_that_does_not_check_out_is_ignored(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    await long_session(tmp_path)
    data = sidecar(tmp_path).read_bytes()
    if damage == "garbage":
        sidecar(tmp_path).write_bytes(b"not an index at all")
    elif damage == "truncated":
        sidecar(tmp_path).write_bytes(data[: len(data) // 2])
    elif damage == "other-log":
        other = b"".join(event.to_json().encode() + b"\n" for event in events(0, LONG, other=1))
        log_path(tmp_path).write_bytes(header().canonical().to_json().encode() + b"\n" + other)
    else:  # same size, a line changed, the modification time moved
        corrupt(tmp_path, 5, events(3, 4, n=9)[0].to_json().encode())
    expected = await opened(JsonlBackend(tmp_path, sidecars=False)).read("s1", 3, 4)
    scanned = count_scans(monkeypatch)
    fresh = opened(JsonlBackend(tmp_path))
    assert await fresh.read("s1", 3, 4) == expected
    assert await fresh.cursor("s1") == LONG
    assert len(scanned) == 1


async def test_a_sidecar_that_lies_about_a_type_is_noticed_and_rebuilt(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await long_session(tmp_path)
    stamp = log_path(tmp_path).stat()
    # Same length, same first and last lines, same times: only the type of one line changed.
    changed = events(10, 11)[0].to_json().replace("message/user", "message/usex").encode()
    corrupt(tmp_path, 12, changed)
    os.utime(log_path(tmp_path), ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    fresh = opened(JsonlBackend(tmp_path))
    found = await fresh.read("s1", 5, 15, types={"message/user"})
    assert [event.seq for event in found] == [5, 6, 7, 8, 9, 11, 12, 13, 14]
    assert [event.seq for event in await fresh.read("s1", types={"message/usex"})] == [10]


async def test_without_sidecars_nothing_but_logs_is_written(opened: Opened, tmp_path: Path) -> None:
    backend = opened(JsonlBackend(tmp_path, sidecars=False))
    await backend.initialize(header(), events(0, LONG))
    await backend.release("s1")
    assert await opened(JsonlBackend(tmp_path, sidecars=False)).cursor("s1") == LONG
    assert tree(tmp_path) == ["sessions", "sessions/s1.jsonl"]


async def test_an_unwritable_sidecar_is_only_a_cache_miss(
    opened: Opened, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log_path(tmp_path).parent.mkdir()
    sidecar(tmp_path).mkdir()  # something in the way
    with caplog.at_level(logging.INFO, logger="dsh.persistence.jsonl"):
        backend = await long_session(tmp_path)
        assert await opened(JsonlBackend(tmp_path)).cursor("s1") == LONG
    assert "cannot write the line index" in caplog.text
    assert (await backend.list())[0].length == LONG


# -- decoding long logs ---------------------------------------------------------------


def long_log(backend: JsonlBackend, tmp_path: Path, length: int) -> None:
    body = b"".join(event.to_json().encode() + b"\n" for event in events(0, length))
    log_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    log_path(tmp_path).write_bytes(header().canonical().to_json().encode() + b"\n" + body)


async def test_decoding_a_long_log_pauses_the_collector_and_restores_it(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from dsh.persistence.jsonl import logs

    long_log(backend, tmp_path, logs._LONG_LOG + 1)
    seen: list[bool] = []
    real_parse_event = logs.parse_event

    def parse_event(path: Path, seq: int, raw: bytes) -> SessionEvent:
        seen.append(gc.isenabled())
        return real_parse_event(path, seq, raw)

    monkeypatch.setattr(logs, "parse_event", parse_event)
    stored = await backend.inspect("s1")
    assert stored is not None and len(stored.events) == logs._LONG_LOG + 1
    assert len(await backend.read("s1")) == logs._LONG_LOG + 1

    assert set(seen) == {False}
    assert gc.isenabled()


async def test_a_short_read_and_a_disabled_collector_are_left_alone(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    import gc

    from dsh.persistence.jsonl import logs

    long_log(backend, tmp_path, logs._LONG_LOG + 1)
    gc.disable()
    try:
        assert len(await backend.read("s1")) == logs._LONG_LOG + 1
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert len(await backend.read("s1", 0, 5)) == 5
    assert gc.isenabled()


async def test_the_collector_is_restored_when_a_long_log_is_corrupt(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    import gc

    from dsh.persistence.jsonl import logs

    long_log(backend, tmp_path, logs._LONG_LOG + 1)
    corrupt(tmp_path, 5, b"{not json")

    with pytest.raises(CorruptLog):
        await backend.inspect("s1")
    assert gc.isenabled()


# -- hostile files ----------------------------------------------------------------------


async def test_the_session_list_skips_every_hostile_file_and_says_so_once(
    opened: Opened,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = opened(JsonlBackend(tmp_path))
    await backend.initialize(header(), events(0, 2))
    directory = tmp_path / "sessions"
    outside = tmp_path / "outside.jsonl"
    outside.write_text(header("link").canonical().to_json() + "\n")
    (directory / "empty.jsonl").write_bytes(b"")
    (directory / "folder.jsonl").mkdir()
    os.mkfifo(directory / "pipe.jsonl")
    (directory / "link.jsonl").symlink_to(outside)
    (directory / "s1.jsonl.bak").write_bytes(log_path(tmp_path).read_bytes())
    (directory / "notes.txt").write_text("hello")
    (directory / "locked.jsonl").write_text(header("locked").canonical().to_json() + "\n")
    real_open = os.open

    def no_permission(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith("locked.jsonl"):  # root reads anything: pretend it may not
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", no_permission)
    with caplog.at_level(logging.WARNING, logger="dsh.persistence.jsonl"), anyio.fail_after(WAIT):
        first = await backend.list()
        second = await backend.list()
    assert [summary.id for summary in first] == ["s1"] == [summary.id for summary in second]
    reasons = {
        record.getMessage().split(" in the session list: ")[0].rsplit("/", 1)[-1]: record
        for record in caplog.records
    }
    assert sorted(reasons) == [
        "empty.jsonl",
        "folder.jsonl",
        "link.jsonl",
        "locked.jsonl",
        "notes.txt",
        "pipe.jsonl",
        "s1.jsonl.bak",
    ]
    assert len(caplog.records) == 7  # once each, although listed twice
    messages = " | ".join(record.getMessage() for record in caplog.records)
    for reason in (
        "no header line",
        "it is a directory",
        "it is a FIFO",
        "it is a symbolic link",
        "Permission denied",
        "its name is not <session id>.jsonl",
    ):
        assert reason in messages
    assert outside.read_text() == header("link").canonical().to_json() + "\n"


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
async def test_reading_a_fifo_or_a_symlink_is_refused_without_blocking(
    backend: JsonlBackend, tmp_path: Path, kind: str
) -> None:
    log_path(tmp_path).parent.mkdir()
    if kind == "fifo":
        os.mkfifo(log_path(tmp_path))
    else:
        target = tmp_path / "elsewhere.jsonl"
        target.write_text(header().canonical().to_json() + "\n")
        log_path(tmp_path).symlink_to(target)
    expected = "a FIFO" if kind == "fifo" else "a symbolic link"
    with anyio.fail_after(WAIT):
        for call in (backend.inspect, backend.cursor, backend.header, backend.mark):
            with pytest.raises(StorageError, match=f"refusing .*s1.jsonl: it is {expected}"):
                await call("s1")
        with pytest.raises(StorageError, match=f"it is {expected}"):
            await backend.append("s1", events(0, 1))
        with pytest.raises(StorageError, match=f"it is {expected}"):
            await backend.trash("s1")
        with pytest.raises(SessionExists):
            await backend.initialize(header(), [])


async def test_logs_are_private_files_in_private_directories(
    opened: Opened, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    backend = opened(JsonlBackend(data))
    await backend.initialize(header(), events(0, 1))
    await backend.trash("s1")
    await backend.restore("s1")
    assert stat.S_IMODE(log_path(data).stat().st_mode) == 0o600
    for folder in (data, data / "sessions", data / "trash"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


# -- the trash ---------------------------------------------------------------------------


async def test_the_trash_is_a_folder_beside_the_sessions_holding_the_log_and_its_index(
    tmp_path: Path,
) -> None:
    backend = await long_session(tmp_path)
    log_bytes = log_path(tmp_path).read_bytes()
    await backend.trash("s1")
    assert (tmp_path / "trash" / "s1.jsonl").read_bytes() == log_bytes
    assert (tmp_path / "trash" / ".s1.jsonl.idx").exists()
    assert not log_path(tmp_path).exists() and not sidecar(tmp_path).exists()
    await backend.restore("s1")
    assert log_path(tmp_path).read_bytes() == log_bytes
    assert sidecar(tmp_path).exists()
    assert sorted(os.listdir(tmp_path / "trash")) == []


async def test_a_move_to_the_trash_cut_short_is_finished_by_the_next_one(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    await backend.initialize(header(), events(0, 2))
    (tmp_path / "trash").mkdir()
    os.link(log_path(tmp_path), tmp_path / "trash" / "s1.jsonl")  # a crash after the link
    await backend.trash("s1")
    assert not log_path(tmp_path).exists()
    await backend.restore("s1")
    assert await backend.read("s1") == events(0, 2)


async def test_a_live_log_is_released_before_it_moves(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    await backend.initialize(header(), events(0, 1))
    await backend.append("s1", events(1, 2))
    await backend.trash("s1")
    with pytest.raises(SessionNotFound):
        await backend.append("s1", events(2, 3))
    await backend.restore("s1")
    await backend.append("s1", events(2, 3))
    assert await backend.read("s1") == events(0, 3)


# -- where the work runs --------------------------------------------------------------


async def test_no_file_work_runs_on_the_event_loop(opened: Opened, tmp_path: Path) -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def sync(fd: int) -> None:
        threads.append(threading.get_ident())
        os.fsync(fd)

    backend = opened(JsonlBackend(tmp_path, sync=sync))
    await backend.initialize(header(), events(0, 1))
    await backend.append("s1", events(1, 2))
    await backend.trash("s1")
    await backend.restore("s1")
    assert threads and loop_thread not in threads


async def test_a_stalled_fsync_stalls_only_the_writes_waiting_for_it(
    opened: Opened, tmp_path: Path
) -> None:
    stalled, entered = threading.Event(), threading.Event()
    armed = [False]

    def sync(fd: int) -> None:
        if armed[0]:
            entered.set()
            stalled.wait(10)
        os.fsync(fd)

    backend = opened(JsonlBackend(tmp_path, sync=sync))
    await backend.initialize(header(), events(0, 1))
    await backend.initialize(header("s2"), events(0, 3))
    armed[0] = True
    async with anyio.create_task_group() as group:
        group.start_soon(backend.append, "s1", events(1, 2))
        with anyio.fail_after(WAIT):
            await anyio.to_thread.run_sync(entered.wait)
            # the loop runs, and reads of any Session answer, while the fsync hangs
            assert await backend.cursor("s2") == 3
            assert await backend.read("s2", 1, 2) == events(1, 2)
            assert [summary.id for summary in await backend.list()] == ["s1", "s2"]
        armed[0] = False
        stalled.set()
    assert await backend.cursor("s1") == 2


async def test_appends_of_several_sessions_are_committed_together(
    opened: Opened, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.persistence.jsonl import logs

    backend = opened(JsonlBackend(tmp_path))
    ids = [f"c{number}" for number in range(6)]
    for session_id in ids:
        await backend.initialize(header(session_id), [])
    rounds: list[int] = []
    real_round = logs.LogFiles.append_round

    def append_round(self: Any, batches: Any) -> None:
        rounds.append(len(batches))
        real_round(self, batches)

    monkeypatch.setattr(logs.LogFiles, "append_round", append_round)
    async with anyio.create_task_group() as group:
        for session_id in ids:
            group.start_soon(backend.append, session_id, events(0, 2))
    assert sum(rounds) == len(ids)
    assert len(rounds) < len(ids)
    for session_id in ids:
        assert await backend.read(session_id) == events(0, 2)


async def test_a_cancelled_append_that_never_reached_the_worker_stores_nothing(
    opened: Opened,
    tmp_path: Path,
) -> None:
    backend = opened(JsonlBackend(tmp_path))
    await backend.initialize(header(), [])
    with anyio.CancelScope() as scope:
        scope.cancel()
        await backend.append("s1", events(0, 1))
    assert await backend.cursor("s1") == 0
    await backend.append("s1", events(0, 1))
    assert await backend.cursor("s1") == 1


@pytest.mark.parametrize("tail", TORN_TAILS)
async def test_creating_an_existing_log_repairs_its_torn_tail_for_the_adopter(
    opened: Opened, tmp_path: Path, tail: bytes
) -> None:
    await opened(JsonlBackend(tmp_path)).initialize(header(), events(0, 3))
    with log_path(tmp_path).open("ab") as file:
        file.write(tail)
    backend = opened(JsonlBackend(tmp_path))
    with pytest.raises(SessionExists):
        await backend.initialize(header(), events(0, 3))
    stored = await backend.inspect("s1")
    assert stored is not None and stored.torn_tail is False
    assert stored.events == tuple(events(0, 3))


# -- depth: the reader accepts whatever any writer wrote (issue 19) -----------------


def _deep_arguments(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _first_edition_line(seq: int, data_depth: int) -> str:
    # What the first edition's writer (pydantic's serializer) wrote for a reply whose
    # tool arguments nest `data_depth - 3` levels: the same canonical bytes as today.
    arguments = _deep_arguments(data_depth - 3)
    data = {"text": "", "toolCalls": [{"id": "c", "name": "t", "arguments": arguments}]}
    text = json.dumps(data, separators=(",", ":"))
    return f'{{"seq":{seq},"type":"message/assistant","time":1,"data":{text}}}'


@pytest.mark.parametrize(
    "data_depth",
    [
        67,  # the deepest data this edition writes (MAX_EVENT_DEPTH)
        199,  # the deepest the first edition's reader could read back
        253,  # the deepest the first edition's writer wrote (its reader failed past 199)
    ],
)
async def test_a_log_written_at_any_depth_a_writer_produced_reads_back_and_forks(
    tmp_path: Path, data_depth: int
) -> None:
    backend = JsonlBackend(tmp_path)
    stored = header("deep")
    line = _first_edition_line(0, data_depth)
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "deep.jsonl").write_text(
        stored.canonical().to_json() + "\n" + line + "\n", encoding="utf-8"
    )
    try:
        found = await backend.inspect("deep")
        assert found is not None
        [event] = found.events
        assert event.to_json() == line
        assert (await backend.read("deep", 0, None))[0] == event
        data = event.data
        assert isinstance(data, dict)
        assert data["toolCalls"][0]["arguments"] == _deep_arguments(data_depth - 3)
        # A fork copies the deep event unchanged: the writer does not re-judge old events.
        child = Session.fork(stored, found.events, "child", at=1, created_at=2)
        await backend.initialize(child.header, child.events)
        copied = await backend.inspect("child")
        assert copied is not None and copied.events[0].to_json() == line
    finally:
        await backend.aclose()


async def test_new_data_deeper_than_the_limit_is_refused_before_anything_is_stored() -> None:
    with pytest.raises(ValueError, match="nested more than 67 levels deep"):
        SessionEvent(seq=0, type="test/deep", time=1, data=_deep_arguments(68))


# -- group commits of several Sessions ------------------------------------------------


async def concurrent_appends(backend: JsonlBackend, ids: list[str]) -> dict[str, Exception]:
    """Append one event to each of `ids` at once: started in one pass, they share a round."""
    failures: dict[str, Exception] = {}

    async def one(session_id: str) -> None:
        try:
            await backend.append(session_id, events(1, 2))
        except Exception as error:
            failures[session_id] = error

    async with anyio.create_task_group() as group:
        for session_id in ids:
            group.start_soon(one, session_id)
    return failures


async def read_afresh(tmp_path: Path, session_id: str) -> list[SessionEvent]:
    """`session_id`'s events as a new backend over the same data dir reads them."""
    reopened = JsonlBackend(tmp_path)
    try:
        return await reopened.read(session_id)
    finally:
        await reopened.aclose()


async def stored_sessions(backend: JsonlBackend, tmp_path: Path, count: int) -> dict[str, int]:
    """`count` stored Sessions s0, s1, … of one event each: id → its log's size."""
    for index in range(count):
        await backend.initialize(header(f"s{index}"), events(0, 1))
    return {f"s{index}": log_path(tmp_path, f"s{index}").stat().st_size for index in range(count)}


@pytest.fixture
def no_syncfs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A filesystem where one syncfs may not stand for each file's fdatasync."""
    monkeypatch.setattr(syncing, "syncfs_reports_errors", lambda fd: False)


@pytest.mark.usefixtures("no_syncfs")
async def test_a_round_of_several_sessions_syncs_their_files_side_by_side(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = list(await stored_sessions(backend, tmp_path, 6))
    synced_on: list[str] = []
    real_sync_one = syncing._sync_one

    def sync_one(fd: int) -> Exception | None:
        synced_on.append(threading.current_thread().name)
        return real_sync_one(fd)

    monkeypatch.setattr(syncing, "_sync_one", sync_one)
    assert await concurrent_appends(backend, ids) == {}

    assert len(synced_on) >= 2 and all(name.startswith("dsh-fsync") for name in synced_on)
    for session_id in ids:
        assert await backend.read(session_id) == events(0, 2)
        lines = log_path(tmp_path, session_id).read_bytes().splitlines()
        assert len(lines) == 3  # the header and both events
    await backend.aclose()
    assert backend._files._syncers.threads is None  # the sync threads end with the backend


@pytest.mark.usefixtures("no_syncfs")
async def test_a_failed_sync_in_a_shared_round_fails_only_its_batch_and_cuts_its_file_back(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = await stored_sessions(backend, tmp_path, 5)
    ids = list(sizes)
    doomed = os.open(log_path(tmp_path, "s3"), os.O_RDONLY)
    doomed_inode = os.fstat(doomed).st_ino
    os.close(doomed)
    real_sync_one = syncing._sync_one

    def sync_one(fd: int) -> Exception | None:
        if os.fstat(fd).st_ino == doomed_inode:
            return OSError(5, "Input/output error")
        return real_sync_one(fd)

    monkeypatch.setattr(syncing, "_sync_one", sync_one)
    failures = await concurrent_appends(backend, ids)

    assert list(failures) == ["s3"]
    assert isinstance(failures["s3"], StorageError)
    assert "cannot append to" in str(failures["s3"]) and "Input/output error" in str(failures["s3"])
    assert log_path(tmp_path, "s3").stat().st_size == sizes["s3"]  # nothing of it left behind
    assert await backend.read("s3") == events(0, 1)
    for session_id in set(ids) - {"s3"}:
        assert await backend.read(session_id) == events(0, 2)

    monkeypatch.setattr(syncing, "_sync_one", real_sync_one)
    await backend.append("s3", events(1, 2))  # the next append works from what is stored
    assert await backend.read("s3") == events(0, 2)


async def test_a_shared_round_keeps_each_batchs_own_refusal(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    ids = [*await stored_sessions(backend, tmp_path, 3), "gone"]
    failures = await concurrent_appends(backend, ids)

    assert list(failures) == ["gone"]
    assert isinstance(failures["gone"], SessionNotFound)
    for session_id in ids[:3]:
        assert await backend.read(session_id) == events(0, 2)


def test_a_parallel_sync_reports_its_failure_rather_than_raising() -> None:
    read, write = os.pipe()
    os.close(read)
    os.close(write)
    failure = syncing._sync_one(write)  # a closed descriptor
    assert isinstance(failure, OSError)


async def test_a_batch_whose_bookkeeping_fails_reports_it_and_the_log_reads_back(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.persistence.jsonl import logs

    await backend.initialize(header(), events(0, 1))
    real_settled = logs.LogFiles._settled

    def settled(self: logs.LogFiles, writer: Any) -> None:
        raise RuntimeError("bookkeeping failed")

    monkeypatch.setattr(logs.LogFiles, "_settled", settled)
    with pytest.raises(RuntimeError, match="bookkeeping failed"):
        await backend.append("s1", events(1, 2))
    monkeypatch.setattr(logs.LogFiles, "_settled", real_settled)
    # Written and synced but not confirmed: the file holds it, and a reader of
    # the file (the coordinator reconciles the same way) finds it there.
    assert await read_afresh(tmp_path, "s1") == events(0, 2)


async def test_a_shared_round_whose_sync_threads_cannot_start_fails_each_batch_alone(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sizes = await stored_sessions(backend, tmp_path, 4)
    ids = list(sizes)

    def no_threads(self: syncing.RoundSync, writers: list[Any]) -> list[Exception | None]:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(syncing.RoundSync, "sync_all", no_threads)
    failures = await concurrent_appends(backend, ids)

    shared = set(ids)  # appends started in one pass share one round
    assert set(failures) == shared
    for session_id in shared:
        assert "can't start new thread" in str(failures[session_id])
        assert log_path(tmp_path, session_id).stat().st_size == sizes[session_id]
        assert await backend.read(session_id) == events(0, 1)
    monkeypatch.undo()
    assert await concurrent_appends(backend, sorted(shared)) == {}
    for session_id in shared:
        assert await backend.read(session_id) == events(0, 2)
