"""`PostgresSearchIndex`: hosts on one database share one index; Chinese without a locale."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from dsh.host.host import Host
from dsh.models.absent import AbsentModel
from dsh.search.backends import search_index_for
from dsh.search.index import Document
from dsh.search.postgres import PostgresSearchIndex
from dsh.search.terms import parse_query
from dsh.session.types import USER_MESSAGE
from tests.support.deadlines import WAIT

from ..persistence.postgres.test_backend import backend_for

pytestmark = [pytest.mark.anyio, pytest.mark.pg]


@pytest.fixture
async def index(pg_url: str) -> AsyncIterator[PostgresSearchIndex]:
    backend = backend_for(pg_url)
    await backend.prepare()
    chosen = search_index_for(backend)
    assert isinstance(chosen, PostgresSearchIndex) and chosen.persistent
    await chosen.clear()
    yield chosen
    await backend.aclose()


async def test_words_and_chinese_are_found_ranked_and_marks_move_forward(
    index: PostgresSearchIndex,
) -> None:
    await index.add("s1", [Document(1, "我们明天开会吧"), Document(2, "Stretch at 5pm")], 3)
    await index.add("s2", [Document(1, "开会 开会 again\x00 meeting")], 2)
    await index.add("s2", [Document(1, "ignored: already indexed")], 1)
    found = await index.search(parse_query("开会"), 10)
    assert [(hit.session_id, hit.seq) for hit in found] == [("s2", 1), ("s1", 1)]
    assert found[0].text == "开会 开会 again\ufffd meeting"  # NUL shown, never refused
    assert [h.session_id for h in await index.search(parse_query("stre"), 10)] == ["s1"]
    assert {h.session_id for h in await index.search(parse_query("会"), 10)} == {"s1", "s2"}
    assert [h.seq for h in await index.search(parse_query("明天开会"), 10)] == [1]
    assert await index.search(parse_query("meeting 开会"), 10) != []
    assert await index.search(parse_query("开明"), 10) == []  # not consecutive: no phrase
    assert await index.search(parse_query("?!"), 10) == []
    assert await index.search(parse_query("开会"), 0) == []
    assert len(await index.search(parse_query("开会"), 1)) == 1
    assert await index.through() == {"s1": 3, "s2": 2}
    await index.forget("s1")
    assert [h.session_id for h in await index.search(parse_query("开会"), 10)] == ["s2"]
    assert await index.through() == {"s2": 2}
    await index.add("s3", [], 4)  # nothing to index still moves the mark
    assert (await index.through())["s3"] == 4


async def test_a_message_stored_by_one_host_is_found_from_another(pg_url: str) -> None:
    async with (
        Host(backend=backend_for(pg_url), model=AbsentModel()) as a,
        Host(backend=backend_for(pg_url), model=AbsentModel()) as b,
    ):
        await a.search.index.clear()
        session = (await a.create_session()).session
        a.live.append(session, USER_MESSAGE, {"text": "下周五下午开会讨论预算"})
        assert await a.live.flush(session)
        with anyio.fail_after(WAIT):
            while not (await b.search.find("预算")):
                await anyio.lowlevel.checkpoint()
        assert list((await b.search.find("预算")) or {}) == [session.id]
    for host in (a, b):
        await host.backend.aclose()
