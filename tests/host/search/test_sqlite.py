"""`SqliteSearchIndex`: idempotent adds, marks, forgetting, ranking, and a broken file."""

from __future__ import annotations

import logging
from pathlib import Path

import anyio
import pytest

from dsh.persistence.errors import StorageError
from dsh.search.index import Document
from dsh.search.sqlite import FILE_NAME, SqliteSearchIndex
from dsh.search.terms import parse_query

pytestmark = pytest.mark.anyio


async def opened(directory: Path | None) -> SqliteSearchIndex:
    index = SqliteSearchIndex(directory)
    await index.open()
    return index


async def test_messages_are_found_by_words_in_english_and_chinese(tmp_path: Path) -> None:
    index = await opened(tmp_path)
    await index.add("s1", [Document(1, "我们明天开会吧"), Document(3, "Stretch at 5pm")], 4)
    await index.add("s2", [Document(2, "开会 again: the meeting notes")], 3)
    found = await index.search(parse_query("开会"), 10)
    assert {(hit.session_id, hit.seq) for hit in found} == {("s1", 1), ("s2", 2)}
    assert [(h.session_id, h.seq) for h in await index.search(parse_query("stre"), 10)] == [
        ("s1", 3)
    ]
    one = await index.search(parse_query("会"), 10)  # one character: a prefix of a pair
    assert {hit.session_id for hit in one} == {"s1", "s2"}
    both = await index.search(parse_query("meeting 开会"), 10)  # every word must occur
    assert [(hit.session_id, hit.seq) for hit in both] == [("s2", 2)]
    assert await index.search(parse_query("absent"), 10) == []
    assert await index.search(parse_query("?!"), 10) == []
    assert await index.through() == {"s1": 4, "s2": 3}
    await index.aclose()
    assert (tmp_path / FILE_NAME).stat().st_mode & 0o777 == 0o600


async def test_adding_again_changes_nothing_and_a_mark_only_moves_forward(tmp_path: Path) -> None:
    index = await opened(tmp_path)
    await index.add("s1", [Document(1, "hello world")], 5)
    await index.add("s1", [Document(1, "hello world")], 2)
    assert len(await index.search(parse_query("hello"), 10)) == 1
    assert await index.through() == {"s1": 5}
    await index.aclose()
    again = await opened(tmp_path)  # kept across a restart
    assert await again.through() == {"s1": 5}
    assert len(await again.search(parse_query("world"), 10)) == 1
    await again.aclose()


async def test_forgetting_and_clearing_drop_what_was_indexed() -> None:
    index = await opened(None)
    await index.add("s1", [Document(1, "alpha beta")], 2)
    await index.add("s2", [Document(1, "alpha gamma")], 2)
    await index.forget("s1")
    assert [h.session_id for h in await index.search(parse_query("alpha"), 10)] == ["s2"]
    assert await index.through() == {"s2": 2}
    await index.clear()
    assert await index.search(parse_query("alpha"), 10) == []
    assert await index.through() == {}
    await index.aclose()


async def test_a_better_match_ranks_first_and_the_limit_holds() -> None:
    index = await opened(None)
    await index.add("s1", [Document(1, "coffee " + "filler " * 50)], 2)
    await index.add("s2", [Document(1, "coffee coffee coffee")], 2)
    hits = await index.search(parse_query("coffee"), 10)
    assert [h.session_id for h in hits] == ["s2", "s1"] and hits[0].rank < hits[1].rank
    assert len(await index.search(parse_query("coffee"), 1)) == 1
    assert await index.search(parse_query("coffee"), 0) == []


async def test_a_broken_file_is_moved_aside_and_started_empty(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / FILE_NAME).write_bytes(b"this is not a database" * 100)
    with caplog.at_level(logging.WARNING):
        index = await opened(tmp_path)
    assert "cannot be used" in caplog.text and "moved aside" in caplog.text
    names = [path.name async for path in anyio.Path(tmp_path).iterdir()]
    assert sum(name.startswith(f"{FILE_NAME}.broken-") for name in names) == 1
    assert await index.through() == {}
    await index.aclose()


async def test_an_index_of_another_version_is_moved_aside(tmp_path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(tmp_path / FILE_NAME)
    db.execute("PRAGMA user_version = 99")
    db.close()
    index = await opened(tmp_path)
    assert await index.through() == {}
    await index.aclose()


async def test_a_closed_or_unopenable_index_is_a_storage_error(tmp_path: Path) -> None:
    index = SqliteSearchIndex(tmp_path)
    with pytest.raises(StorageError, match="is not open"):
        await index.through()
    unreachable = SqliteSearchIndex(tmp_path / "missing" / "dir")
    with pytest.raises(StorageError, match=r"search\.sqlite"):
        await unreachable.open()
    opened_one = await opened(tmp_path)
    await opened_one.aclose()
    await opened_one.aclose()  # twice is fine
