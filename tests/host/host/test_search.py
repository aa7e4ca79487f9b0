"""The Host's search: messages indexed after they are stored, caught up after a restart,
forgotten with their Session, found again when it is restored; the list's order."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.host import search as search_module
from dsh.host.host import Host
from dsh.host.search import Match, ranked_rows
from dsh.persistence.errors import StorageError
from dsh.persistence.jsonl import JsonlBackend
from dsh.persistence.memory import MemoryBackend
from dsh.search.sqlite import FILE_NAME
from dsh.session.summary import SessionSummary
from dsh.session.types import ASSISTANT_MESSAGE, USER_MESSAGE
from dsh.testing import FakeClock, FakeModel
from tests.support.deadlines import WAIT, until

pytestmark = pytest.mark.anyio


def host_on(backend: object) -> Host:
    return Host(backend=backend, model=FakeModel(), clock=FakeClock())  # type: ignore[arg-type]


async def say(host: Host, session_id: str, *texts: str) -> None:
    session = host.live.get(session_id)
    for text in texts:
        host.live.append(session, USER_MESSAGE, {"text": text})
    host.live.append(session, ASSISTANT_MESSAGE, {"text": "noted: " + texts[-1]})
    assert await host.live.flush(session)


async def found(host: Host, text: str, expect: int | None = None) -> dict[str, Match]:
    """What `text` finds, once the index has caught up (`expect` Sessions, when given)."""
    with anyio.fail_after(WAIT):
        while True:
            answer = await host.search.find(text)
            assert answer is not None
            if expect is None or len(answer) == expect:
                return answer
            await anyio.lowlevel.checkpoint()


async def test_a_stored_message_is_found_by_its_words_with_a_snippet(tmp_path: Path) -> None:
    async with host_on(JsonlBackend(tmp_path)) as host:
        first = (await host.create_session()).session.id
        second = (await host.create_session()).session.id
        await say(host, first, "明天下午三点开会，记得带电脑")
        await say(host, second, "we should 开会 on Friday", "and stretch")
        answer = await found(host, "开会", expect=2)
        assert set(answer) == {first, second}
        assert "开会" in answer[first].snippet
        assert host.live.get(first).event(answer[first].seq).data == {
            "text": "明天下午三点开会，记得带电脑"
        }
        assert set(await found(host, "stretch", expect=1)) == {second}
        assert await host.search.find("   ") == {}


async def test_a_restart_catches_up_what_was_stored_but_not_indexed(tmp_path: Path) -> None:
    async with host_on(JsonlBackend(tmp_path)) as host:
        session_id = (await host.create_session()).session.id
        await say(host, session_id, "remember the blue umbrella")
        await found(host, "umbrella", expect=1)
    (tmp_path / FILE_NAME).unlink()  # as if it was lost: made again from the logs
    async with host_on(JsonlBackend(tmp_path)) as host:
        assert set(await found(host, "umbrella", expect=1)) == {session_id}


async def test_a_deleted_session_is_not_found_and_a_restored_one_is(tmp_path: Path) -> None:
    async with host_on(JsonlBackend(tmp_path)) as host:
        session_id = (await host.create_session()).session.id
        await say(host, session_id, "the kettle whistles")
        await found(host, "kettle", expect=1)
        await host.sessions.delete(session_id)
        assert await found(host, "kettle", expect=0) == {}
        await host.sessions.restore(session_id)
        assert set(await found(host, "kettle", expect=1)) == {session_id}


async def test_a_memory_store_finds_what_this_host_stored() -> None:
    async with host_on(MemoryBackend()) as host:
        session_id = (await host.create_session()).session.id
        await say(host, session_id, "a fork of this")
        assert set(await found(host, "fork", expect=1)) == {session_id}
        fork = await host.sessions.fork(session_id)
        answer = await found(host, "fork", expect=2)  # a fork's copied prefix is its own too
        assert set(answer) == {session_id, fork.session.id}


async def test_an_index_that_fails_falls_back_to_titles_and_heals(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with host_on(JsonlBackend(tmp_path)) as host:
        session_id = (await host.create_session()).session.id
        index = host.search.index
        original_add, original_search = index.add, index.search

        async def refuse(*args: object, **kwargs: object) -> None:
            raise StorageError("disk I/O error")

        index.add = refuse  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="dsh.host.search"):
            await say(host, session_id, "the lighthouse keeper")
            with anyio.fail_after(WAIT):
                while "could not index" not in caplog.text:
                    await anyio.lowlevel.checkpoint()
        index.add = original_add  # type: ignore[method-assign]
        await say(host, session_id, "another line")  # its mark did not move: both are indexed
        assert set(await found(host, "lighthouse", expect=1)) == {session_id}
        index.search = refuse  # type: ignore[method-assign]
        with caplog.at_level(logging.WARNING, logger="dsh.host.search"):
            assert await host.search.find("lighthouse") is None
        assert "fell back to titles" in caplog.text
        index.search = original_search  # type: ignore[method-assign]


async def test_an_index_that_cannot_open_leaves_search_to_titles(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(self: object) -> None:
        raise StorageError("search.sqlite: unable to open database file")

    monkeypatch.setattr("dsh.search.sqlite.SqliteSearchIndex.open", refuse)
    with caplog.at_level(logging.WARNING, logger="dsh.host.search"):
        async with host_on(JsonlBackend(tmp_path)) as host:
            assert await host.search.find("anything") is None
            assert await host.search.find("") == {}
    assert "search will only match titles" in caplog.text


async def test_a_directory_where_the_index_should_be_is_moved_aside(tmp_path: Path) -> None:
    (tmp_path / FILE_NAME).mkdir()
    async with host_on(JsonlBackend(tmp_path)) as host:
        session_id = (await host.create_session()).session.id
        await say(host, session_id, "found after all")
        assert set(await found(host, "found", expect=1)) == {session_id}
    names = [path.name async for path in anyio.Path(tmp_path).iterdir()]
    assert any(name.startswith(f"{FILE_NAME}.broken-") for name in names)


async def test_rebuild_indexes_every_stored_session_again(tmp_path: Path) -> None:
    async with host_on(JsonlBackend(tmp_path)) as host:
        ids = [(await host.create_session()).session.id for _ in range(3)]
        for number, session_id in enumerate(ids):
            await say(host, session_id, f"note number{number}")
        assert await host.search.rebuild() == 3
        assert set(await found(host, "note", expect=3)) == set(ids)


def row(session_id: str, title: str | None = None, created: int = 0) -> SessionSummary:
    return SessionSummary(session_id, created, False, 3, None, title=title)


def test_the_list_shows_title_matches_first_then_messages_best_first() -> None:
    rows = [row("aaaa", "meeting plans", 3), row("bbbb", None, 2), row("cccc", None, 1)]
    hits = {"cccc": Match(4, "…the meeting…", -2.0), "aaaa": Match(1, "m", -1.0),
            "gone": Match(1, "x", -3.0)}  # fmt: skip
    chosen = ranked_rows(rows, "meeting", hits)
    assert [(r.id, m.seq if m else None) for r, m in chosen] == [("aaaa", 1), ("cccc", 4)]
    assert [r.id for r, _ in ranked_rows(rows, "meeting", None)] == ["aaaa"]
    assert Match(4, "s", 0.0).to_dict() == {"seq": 4, "snippet": "s"}


async def test_indexing_is_background_work_it_waits_while_the_host_does_urgent_work() -> None:
    async with host_on(MemoryBackend()) as host:
        host.background.patience = 3600
        session_id = (await host.create_session()).session.id
        with host.background.urgent():  # a storm's dispatches being stored
            await say(host, session_id, "water the plants")
            for _ in range(200):
                await anyio.lowlevel.checkpoint()
            assert await host.search.find("plants") == {}
        assert set(await found(host, "plants", expect=1)) == {session_id}


async def test_closing_stops_a_worker_still_behind_after_the_grace_without_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(search_module, "CLOSE_GRACE_SECONDS", 0.01)
    host = host_on(JsonlBackend(tmp_path))
    async with host:
        first = (await host.create_session()).session.id
        second = (await host.create_session()).session.id
        index = host.search.index
        real_add, real_close = index.add, index.aclose
        adding, closed = anyio.Event(), anyio.Event()

        async def add(*args: Any, **kwargs: Any) -> Any:
            adding.set()
            await closed.wait()  # slower than the grace: the index closes meanwhile
            return await real_add(*args, **kwargs)

        async def aclose() -> None:
            closed.set()
            await anyio.lowlevel.checkpoint()  # the worker, if it still ran, runs here
            await real_close()

        monkeypatch.setattr(index, "add", add)
        monkeypatch.setattr(index, "aclose", aclose)
        await say(host, first, "water the plants")
        await say(host, second, "feed the cat")
        await until(adding.is_set)
    assert "search could not index" not in caplog.text
    # What was not indexed is caught up at the next start.
    async with host_on(JsonlBackend(tmp_path)) as again:
        assert set(await found(again, "plants", expect=1)) == {first}
        assert set(await found(again, "cat", expect=1)) == {second}


async def test_a_flush_with_nothing_new_to_store_queues_no_indexing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search_module, "SETTLE_SECONDS", 3600)  # only flushes offer jobs
    async with host_on(MemoryBackend()) as host:
        session_id = (await host.create_session()).session.id
        await say(host, session_id, "feed the cat")
        await found(host, "cat", expect=1)
        offered: list[int | None] = []
        real = host.search._offer

        def offer(job: search_module._Job) -> None:
            offered.append(job.through)
            real(job)

        monkeypatch.setattr(host.search, "_offer", offer)
        session = host.live.get(session_id)
        # A reminder's preflight: a barrier with nothing appended since the last one.
        assert await host.live.flush(session)
        assert offered == []
        await say(host, session_id, "and the dog")
        assert offered == [len(session)]
        assert set(await found(host, "dog", expect=1)) == {session_id}
