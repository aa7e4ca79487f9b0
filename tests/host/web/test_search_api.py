"""`GET /api/sessions?q=`: words said anywhere, title matches first, each with its best message."""

from __future__ import annotations

import anyio
import httpx
import pytest

from dsh.host.host import Host
from dsh.session.types import ASSISTANT_MESSAGE, USER_MESSAGE
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


async def listed(client: httpx.AsyncClient, q: str, count: int) -> list[dict[str, object]]:
    with anyio.fail_after(WAIT):
        while (
            len(rows := (await client.get("/api/sessions", params={"q": q})).json()["sessions"])
            != count
        ):
            await anyio.lowlevel.checkpoint()
    return rows


async def test_search_finds_words_in_any_message_with_a_snippet(
    client: httpx.AsyncClient, host: Host
) -> None:
    titled = (await client.post("/api/sessions")).json()["session"]["id"]
    assert (
        await client.patch(f"/api/sessions/{titled}", json={"title": "开会 agenda"})
    ).status_code == 200
    other = (await client.post("/api/sessions")).json()["session"]["id"]
    session = host.live.get(other)
    host.live.append(session, USER_MESSAGE, {"text": "hello"})
    host.live.append(session, ASSISTANT_MESSAGE, {"text": "下周一上午十点开会，请准备报告"})
    assert await host.live.flush(session)
    rows = await listed(client, "开会", 2)
    assert [row["id"] for row in rows] == [titled, other]  # the title's match first
    assert "match" not in rows[0]
    assert rows[1]["match"] == {"seq": 1, "snippet": "下周一上午十点开会，请准备报告"}
    assert await listed(client, "nothing like it", 0) == []
    everything = (await client.get("/api/sessions")).json()["sessions"]
    assert {row["id"] for row in everything} == {titled, other}
    assert all("match" not in row for row in everything)
