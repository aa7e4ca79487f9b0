from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dsh.wake import JsonlWakeBackend, WakeEntry
from dsh.wake import jsonl as wake_jsonl
from dsh.wake.errors import WakeBackendError
from dsh.wake.jsonl import FORMAT, INDEX_NAME, VERSION

pytestmark = pytest.mark.anyio

HEADER = json.dumps({"format": FORMAT, "version": VERSION}, separators=(",", ":"))


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / INDEX_NAME
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_missing_index_asks_for_a_rebuild_naming_the_file(tmp_path: Path) -> None:
    wake = JsonlWakeBackend(tmp_path)
    loaded = await wake.load()
    assert loaded.entries == {}
    assert loaded.problem == f"there is no wake index at {tmp_path / INDEX_NAME}"
    assert loaded.missing is True


async def test_a_snapshot_then_appended_changes_load_back_later_ones_winning(
    tmp_path: Path,
) -> None:
    wake = JsonlWakeBackend(tmp_path)
    await wake.replace({"b": WakeEntry(2), "a": WakeEntry(1), "gone": WakeEntry()})
    await wake.write([("c", WakeEntry(None, True)), ("a", WakeEntry()), ("b", WakeEntry(3))])
    await wake.write([])
    await wake.aclose()
    path = tmp_path / INDEX_NAME
    assert lines(path) == [
        {"format": FORMAT, "version": VERSION},
        {"id": "a", "wakeAt": 1, "dirty": False},
        {"id": "b", "wakeAt": 2, "dirty": False},
        {"id": "c", "wakeAt": None, "dirty": True},
        {"id": "a", "wakeAt": None, "dirty": False},
        {"id": "b", "wakeAt": 3, "dirty": False},
    ]
    assert os.stat(path).st_mode & 0o777 == 0o600
    loaded = await JsonlWakeBackend(tmp_path).load()
    assert loaded.problem is None
    assert loaded.entries == {"b": WakeEntry(3), "c": WakeEntry(None, True)}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "it is empty"),
        ('{"format":"dsh-wake-index","version":1}', "its header line is torn"),
        ('{"format":"other","version":1}\n', "line 1 names format 'other'"),
        ('{"format":"dsh-wake-index","version":2}\n', "format version 2; this dsh reads version 1"),
        ('{"format":"dsh-wake-index","version":0}\n', "format version 0"),
        ("not json\n", "line 1 is not a valid record: not JSON"),
        (
            HEADER
            + '\n{"id":"a","wakeAt":1,"dirty":false,"x":1}\n{"id":"b","wakeAt":1,"dirty":false}\n',
            "line 2 is not a valid record",
        ),
        (
            HEADER
            + '\n{"id":"../x","wakeAt":1,"dirty":false}\n{"id":"b","wakeAt":1,"dirty":false}\n',
            "session id",
        ),
        (HEADER + '\n{"id":"a","wakeAt":"soon","dirty":false}\n\n', "line 2 is not a valid record"),
        (HEADER + '\n{"id":"a","wakeAt":true,"dirty":false}\n\n', "line 2 is not a valid record"),
        (HEADER + '\n{"id":"a","wakeAt":1,"dirty":1}\n\n', "line 2 is not a valid record"),
        (HEADER + '\n{"id":7,"wakeAt":1,"dirty":false}\n\n', "line 2 is not a valid record"),
        (HEADER + "\n[1]\n\n", "line 2 is not a valid record"),
    ],
)
async def test_an_unusable_index_is_reported_with_the_reason(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = write_file(tmp_path, text)
    loaded = await JsonlWakeBackend(tmp_path).load()
    assert loaded.entries == {}
    assert loaded.problem is not None
    assert loaded.problem.startswith(f"{path} cannot be used: ")
    assert reason in loaded.problem


async def test_a_torn_last_line_is_ignored_and_truncated_before_the_next_append(
    tmp_path: Path,
) -> None:
    path = write_file(tmp_path, HEADER + '\n{"id":"a","wakeAt":1,"dirty":false}\n{"id":"b","wa')
    wake = JsonlWakeBackend(tmp_path)
    assert (await wake.load()).entries == {"a": WakeEntry(1)}
    await wake.write([("c", WakeEntry(7))])
    await wake.aclose()
    assert lines(path)[1:] == [
        {"id": "a", "wakeAt": 1, "dirty": False},
        {"id": "c", "wakeAt": 7, "dirty": False},
    ]


async def test_a_last_complete_line_that_is_not_json_is_torn_too(tmp_path: Path) -> None:
    write_file(tmp_path, HEADER + '\n{"id":"a","wakeAt":1,"dirty":false}\n{"id":"b"\n')
    assert (await JsonlWakeBackend(tmp_path).load()).entries == {"a": WakeEntry(1)}


async def test_a_symlink_or_a_directory_is_refused_and_rebuilt(tmp_path: Path) -> None:
    target = write_file(tmp_path, HEADER + "\n")
    link_dir = tmp_path / "linked"
    link_dir.mkdir()
    (link_dir / INDEX_NAME).symlink_to(target)
    loaded = await JsonlWakeBackend(link_dir).load()
    assert loaded.problem is not None and "symbolic link" in loaded.problem
    folder_dir = tmp_path / "folder"
    (folder_dir / INDEX_NAME).mkdir(parents=True)
    loaded = await JsonlWakeBackend(folder_dir).load()
    assert loaded.problem is not None and "directory" in loaded.problem


async def test_many_changes_compact_into_one_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wake_jsonl, "COMPACT_MIN_LINES", 8)
    wake = JsonlWakeBackend(tmp_path)
    await wake.replace({})
    for step in range(20):
        await wake.write([("a", WakeEntry(step)), ("b", WakeEntry(None, step % 2 == 0))])
    await wake.aclose()
    stored = lines(tmp_path / INDEX_NAME)
    assert len(stored) <= 8 + 1
    assert (await JsonlWakeBackend(tmp_path).load()).entries == {"a": WakeEntry(19)}


async def test_writing_before_any_snapshot_writes_one(tmp_path: Path) -> None:
    wake = JsonlWakeBackend(tmp_path / "new")
    await wake.write([("a", WakeEntry(1))])
    await wake.aclose()
    assert lines(tmp_path / "new" / INDEX_NAME) == [
        {"format": FORMAT, "version": VERSION},
        {"id": "a", "wakeAt": 1, "dirty": False},
    ]


async def test_a_failed_fsync_is_an_error_naming_the_file_and_nothing_half_written_remains(
    tmp_path: Path,
) -> None:
    broken = {"on": False}

    def sync(fd: int) -> None:
        if broken["on"]:
            raise OSError(5, "Input/output error")
        os.fsync(fd)

    wake = JsonlWakeBackend(tmp_path, sync=sync)
    await wake.replace({"a": WakeEntry(1)})
    broken["on"] = True
    with pytest.raises(WakeBackendError, match=f"cannot write {tmp_path / INDEX_NAME}"):
        await wake.write([("b", WakeEntry(2))])
    with pytest.raises(WakeBackendError, match="Input/output error"):
        await wake.replace({"c": WakeEntry(3)})
    assert os.listdir(tmp_path) == [INDEX_NAME]  # no temp file left
    broken["on"] = False
    await wake.write([("d", WakeEntry(4))])  # truncates the unacknowledged line first
    await wake.aclose()
    assert (await JsonlWakeBackend(tmp_path).load()).entries == {
        "a": WakeEntry(1),
        "d": WakeEntry(4),
    }


async def test_discard_removes_the_file_so_the_next_load_rebuilds(tmp_path: Path) -> None:
    wake = JsonlWakeBackend(tmp_path)
    await wake.replace({"a": WakeEntry(1)})
    await wake.discard()
    await wake.discard()  # nothing there: still fine
    assert not (tmp_path / INDEX_NAME).exists()
    assert (await wake.load()).problem is not None
    await wake.aclose()


async def test_discard_that_cannot_remove_the_file_is_an_error(tmp_path: Path) -> None:
    def sync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    wake = JsonlWakeBackend(tmp_path, sync=sync)
    with pytest.raises(WakeBackendError, match=f"cannot remove {tmp_path / INDEX_NAME}"):
        await wake.discard()


async def test_an_unreadable_index_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_file(tmp_path, HEADER + "\n")

    def fail(fd: int, offset: int = 0) -> bytes:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(wake_jsonl, "read_all", fail)
    loaded = await JsonlWakeBackend(tmp_path).load()
    assert loaded.problem == f"cannot read {tmp_path / INDEX_NAME}: [Errno 5] Input/output error"
