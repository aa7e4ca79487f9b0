from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh.persistence import (
    Backend,
    CorruptLog,
    IntegrityError,
    JsonlBackend,
    SessionExists,
    SessionNotFound,
    StorageError,
)
from dsh.session import InvalidSessionId, SessionEvent
from dsh.testing import FaultyBackend

from .contract import BackendContract, events, header

pytestmark = pytest.mark.anyio

B = TypeVar("B", bound=Backend)
Opened = Callable[[B], B]


class TestJsonlBackendContract(BackendContract):
    @pytest.fixture
    def backend(self, tmp_path: Path, opened: Opened) -> JsonlBackend:
        self.opened = opened
        return opened(JsonlBackend(tmp_path))

    async def reopen(self, backend: Backend) -> Backend:
        assert isinstance(backend, JsonlBackend)
        return self.opened(JsonlBackend(backend.directory.parent))


class TestOffloadedJsonlBackendContract(TestJsonlBackendContract):
    @pytest.fixture
    def backend(self, tmp_path: Path, opened: Opened) -> JsonlBackend:
        self.opened = opened
        return opened(JsonlBackend(tmp_path, offload=True))


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


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(), children, max_size=3)
    ),
    max_leaves=12,
)


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


async def test_list_reports_a_corrupt_header(opened: Opened, tmp_path: Path) -> None:
    await opened(JsonlBackend(tmp_path)).initialize(header(), [])
    corrupt(tmp_path, 1, b"{}")
    with pytest.raises(CorruptLog, match="line 1"):
        await opened(JsonlBackend(tmp_path)).list()


async def test_list_ignores_files_that_are_not_logs(backend: JsonlBackend, tmp_path: Path) -> None:
    await backend.initialize(header(), [])
    directory = tmp_path / "sessions"
    for name in [".s2.jsonl.abc.tmp", "notes.txt", "-bad.jsonl", "s3.jsonl.bak", "s4.json"]:
        (directory / name).write_text("junk")
    assert [summary.id for summary in await backend.list()] == ["s1"]


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


async def test_a_log_changed_behind_the_writers_back_is_re_read(
    opened: Opened, tmp_path: Path
) -> None:
    first = opened(JsonlBackend(tmp_path))
    second = opened(JsonlBackend(tmp_path))
    await first.initialize(header(), events(0, 1))
    await first.append("s1", events(1, 2))
    await second.append("s1", events(2, 3))
    with pytest.raises(IntegrityError) as info:
        await first.append("s1", events(2, 3))
    assert info.value.expected == 3
    assert await first.cursor("s1") == 3
    await first.append("s1", events(3, 4))
    stored = await second.inspect("s1")
    assert stored is not None
    assert stored.events == tuple(events(0, 4))


async def test_a_deleted_log_is_noticed(backend: JsonlBackend, tmp_path: Path) -> None:
    await backend.initialize(header(), events(0, 1))
    log_path(tmp_path).unlink()
    assert await backend.cursor("s1") is None
    with pytest.raises(SessionNotFound):
        await backend.append("s1", events(1, 2))
    await backend.initialize(header(), [])
    assert await backend.cursor("s1") == 0


async def test_release_closes_the_open_log(backend: JsonlBackend, tmp_path: Path) -> None:
    def open_logs() -> int:
        log = log_path(tmp_path).stat()
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.stat(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            count += (target.st_dev, target.st_ino) == (log.st_dev, log.st_ino)
        return count

    await backend.initialize(header(), events(0, 1))
    await backend.append("s1", events(1, 2))
    assert open_logs() == 1
    await backend.release("s1")
    assert open_logs() == 0
    await backend.append("s1", events(2, 3))
    assert open_logs() == 1
    await backend.aclose()
    assert open_logs() == 0


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


async def test_an_unreadable_log_is_a_storage_error(backend: JsonlBackend, tmp_path: Path) -> None:
    log_path(tmp_path).parent.mkdir()
    log_path(tmp_path).mkdir()  # a directory where the log should be
    with pytest.raises(StorageError, match=r"cannot read .*s1\.jsonl"):
        await backend.inspect("s1")
    with pytest.raises(StorageError, match=r"cannot open .*s1\.jsonl"):
        await backend.append("s1", events(0, 1))


async def test_offloaded_appends_are_serialised_per_session(opened: Opened, tmp_path: Path) -> None:
    backend = opened(JsonlBackend(tmp_path, offload=True))
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
    backend = opened(JsonlBackend(tmp_path, offload=True))
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


# -- remembered validation ----------------------------------------------------------


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every full parse of a log (the cost the memo saves)."""
    from dsh.persistence import jsonl

    parsed: list[Path] = []
    real_parse = jsonl._parse

    def parse(path: Path, *args: Any, **kwargs: Any) -> Any:
        parsed.append(path)
        return real_parse(path, *args, **kwargs)

    monkeypatch.setattr(jsonl, "_parse", parse)
    return parsed


async def test_inspect_returns_the_held_result_while_the_log_is_unchanged(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    parsed = count_parses(monkeypatch)

    first = await backend.inspect("s1")
    again = await backend.inspect("s1")

    assert again is first
    assert len(parsed) == 1


async def test_a_result_nobody_holds_is_read_again(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    parsed = count_parses(monkeypatch)

    first = await backend.inspect("s1")
    assert first is not None
    del first
    second = await backend.inspect("s1")

    assert second is not None and second.events == tuple(events(0, 3))
    assert len(parsed) == 2


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


async def test_cursor_and_the_next_append_reuse_a_validation_of_the_same_log(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    parsed = count_parses(monkeypatch)

    assert await backend.cursor("s1") == 3
    assert await backend.cursor("s1") == 3
    await backend.append("s1", events(3, 4))

    assert len(parsed) == 1
    stored = await backend.inspect("s1")
    assert stored is not None and stored.events == tuple(events(0, 4))


@pytest.mark.parametrize("tail", TORN_TAILS)
async def test_a_remembered_torn_tail_is_still_truncated_before_appending(
    backend: JsonlBackend, tmp_path: Path, tail: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    await backend.initialize(header(), events(0, 3))
    await backend.release("s1")
    with log_path(tmp_path).open("ab") as file:
        file.write(tail)
    parsed = count_parses(monkeypatch)
    held = await backend.inspect("s1")
    assert held is not None and held.torn_tail is True

    await backend.append("s1", events(3, 5))

    assert len(parsed) == 1
    stored = await backend.inspect("s1")
    assert stored is not None and stored.torn_tail is False
    assert stored.events == tuple(events(0, 5))


async def test_only_the_most_recent_validations_are_remembered(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.persistence import jsonl

    monkeypatch.setattr(jsonl, "_MAX_SCANS", 2)
    for session_id in ("s1", "s2", "s3"):
        await backend.initialize(header(session_id), events(0, 1))
        await backend.release(session_id)
    parsed = count_parses(monkeypatch)
    for session_id in ("s1", "s2", "s3"):
        assert await backend.cursor(session_id) == 1

    assert await backend.cursor("s3") == 1  # remembered
    assert await backend.cursor("s1") == 1  # forgotten: the oldest of three
    assert len(parsed) == 4


# -- decoding long logs ---------------------------------------------------------------


def long_log(backend: JsonlBackend, tmp_path: Path, length: int) -> None:
    body = b"".join(event.to_json().encode() + b"\n" for event in events(0, length))
    log_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    log_path(tmp_path).write_bytes(header().canonical().to_json().encode() + b"\n" + body)


async def test_decoding_a_long_log_pauses_the_collector_and_restores_it(
    backend: JsonlBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from dsh.persistence import jsonl

    long_log(backend, tmp_path, jsonl._LONG_LOG + 1)
    seen: list[bool] = []
    real_parse_event = jsonl._parse_event

    def parse_event(path: Path, seq: int, raw: bytes) -> SessionEvent:
        seen.append(gc.isenabled())
        return real_parse_event(path, seq, raw)

    monkeypatch.setattr(jsonl, "_parse_event", parse_event)
    stored = await backend.inspect("s1")

    assert stored is not None and len(stored.events) == jsonl._LONG_LOG + 1
    assert set(seen) == {False}
    assert gc.isenabled()


async def test_a_short_log_and_a_disabled_collector_are_left_alone(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    import gc

    from dsh.persistence import jsonl

    long_log(backend, tmp_path, jsonl._LONG_LOG + 1)
    gc.disable()
    try:
        assert await backend.cursor("s1") == jsonl._LONG_LOG + 1
        assert not gc.isenabled()
    finally:
        gc.enable()
    await backend.initialize(header("s2"), events(0, 2))
    assert await backend.cursor("s2") == 2
    assert gc.isenabled()


async def test_the_collector_is_restored_when_a_long_log_is_corrupt(
    backend: JsonlBackend, tmp_path: Path
) -> None:
    import gc

    from dsh.persistence import jsonl

    long_log(backend, tmp_path, jsonl._LONG_LOG + 1)
    corrupt(tmp_path, 5, b"{not json")

    with pytest.raises(CorruptLog):
        await backend.inspect("s1")
    assert gc.isenabled()
