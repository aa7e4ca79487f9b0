from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import dsh
from dsh.host.errors import PersistenceUnavailable
from dsh.host.host import Host
from dsh.persistence.errors import CorruptLog, StorageError
from dsh.plugins.context import ClientModule
from dsh.session.errors import FlushError
from dsh.session.log import Session
from dsh.testing import FakeClock

from .conftest import (
    MARKED,
    PLAIN,
    PublicationCounter,
    StorageDouble,
    StreamingModel,
    UiPlugin,
    wait_until,
)

pytestmark = pytest.mark.anyio


async def new_session(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.post("/api/sessions")
    assert response.status_code == 201
    session: dict[str, Any] = response.json()["session"]
    return session


def error_of(response: httpx.Response) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["message"]
    return response.status_code, body["error"]["code"]


# -- health, list, create -------------------------------------------------


async def test_health_reports_ok_and_the_version(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/health")
    assert response.status_code == 200
    assert response.json() == {"ok": True, "version": dsh.__version__}


async def test_creating_a_session_answers_201_after_it_is_stored(
    client: httpx.AsyncClient, host: Host, backend: StorageDouble, clock: FakeClock
) -> None:
    response = await client.post("/api/sessions")
    assert response.status_code == 201
    session = response.json()["session"]
    assert session == {
        "id": session["id"],
        "createdAt": clock.wall_ms(),
        "live": True,
        "length": 0,
        "lineage": None,
        "title": None,
        "plugins": {},
        "updatedAt": clock.wall_ms(),
    }
    assert await backend.cursor(session["id"]) == 0
    assert host.agent(session["id"]) is not None


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (
            PersistenceUnavailable("storage did not acknowledge session s"),
            "persistence_unavailable",
        ),
        (StorageError("read-only file system"), "storage_unavailable"),
    ],
)
async def test_creating_a_session_whose_storage_fails_answers_503(
    client: httpx.AsyncClient,
    host: Host,
    monkeypatch: pytest.MonkeyPatch,
    error: Exception,
    code: str,
) -> None:
    async def refuse(**_: Any) -> Any:
        raise error

    monkeypatch.setattr(host, "create_session", refuse)
    assert error_of(await client.post("/api/sessions")) == (503, code)


async def test_a_failed_flush_barrier_answers_503(
    client: httpx.AsyncClient, host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(**_: Any) -> Any:
        session = Session.new("s", cwd="/", created_at=0)
        raise FlushError(session, [StorageError("disk full")])

    monkeypatch.setattr(host, "create_session", refuse)
    assert error_of(await client.post("/api/sessions")) == (503, "persistence_failed")


async def test_sessions_are_listed_newest_first(
    client: httpx.AsyncClient, clock: FakeClock
) -> None:
    first = await new_session(client)
    clock.advance(1)
    second = await new_session(client)
    response = await client.get("/api/sessions")
    assert response.status_code == 200
    assert [row["id"] for row in response.json()["sessions"]] == [second["id"], first["id"]]
    assert response.json()["sessions"][0] == {**second, "unread": 0}


@pytest.mark.parametrize(
    ("error", "status", "code"),
    [
        (StorageError("backend offline"), 503, "storage_unavailable"),
        (OSError(5, "I/O error"), 503, "storage_unavailable"),
        (CorruptLog("x.jsonl", 3, "not JSON"), 500, "storage_corrupt"),
    ],
)
async def test_storage_errors_answer_in_the_error_shape(
    client: httpx.AsyncClient,
    backend: StorageDouble,
    error: Exception,
    status: int,
    code: str,
) -> None:
    backend.errors["list"] = error
    assert error_of(await client.get("/api/sessions")) == (status, code)


# -- one session -----------------------------------------------------------


async def test_a_live_session_shows_its_header_length_and_agent(
    client: httpx.AsyncClient, host: Host
) -> None:
    created = await new_session(client)
    agent = host.agent(created["id"])
    assert agent is not None
    host.live.append(agent.session, PLAIN, {})
    response = await client.get(f"/api/sessions/{created['id']}")
    assert response.status_code == 200
    assert response.json() == {
        "header": agent.session.header.to_dict(),
        "live": True,
        "length": 1,
        "agent": {"root": True, "tools": []},
        "plugins": {},
    }


async def test_a_cold_session_is_read_from_storage_without_publishing_an_agent(
    client: httpx.AsyncClient, host: Host, publications: PublicationCounter
) -> None:
    created = await new_session(client)
    await host.close_session(created["id"])
    published = list(publications.published)
    response = await client.get(f"/api/sessions/{created['id']}")
    assert response.status_code == 200
    body = response.json()
    assert body["live"] is False and body["agent"] is None and body["length"] == 0
    assert body["header"]["id"] == created["id"]
    assert publications.published == published
    assert host.live.find(created["id"]) is None


async def test_a_live_session_without_its_agent_yet_shows_agent_null(
    client: httpx.AsyncClient, host: Host
) -> None:
    created = await new_session(client)
    agent = host.agent(created["id"])
    assert agent is not None
    host.liveness._agents.pop(created["id"])  # the moment between going live and publication
    try:
        response = await client.get(f"/api/sessions/{created['id']}")
        assert response.json()["agent"] is None
        assert response.json()["live"] is True
    finally:
        host.liveness._agents[created["id"]] = agent


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("GET", ""),
        ("POST", "/resume"),
        ("POST", "/fork"),
        ("GET", "/events"),
    ],
)
async def test_an_unknown_session_is_404_session_not_found(
    client: httpx.AsyncClient, method: str, suffix: str
) -> None:
    response = await client.request(method, f"/api/sessions/nobody{suffix}")
    assert error_of(response) == (404, "session_not_found")


async def test_posting_to_an_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/sessions/nobody/messages", json={"text": "hi"})
    assert error_of(response) == (404, "session_not_found")


@pytest.mark.parametrize("bad", [".hidden", "a.b", "-dash", "x" * 65, "%20space", "a%00b"])
@pytest.mark.parametrize("suffix", ["", "/resume", "/fork", "/events", "/messages"])
async def test_an_invalid_id_is_refused_before_storage_is_touched(
    client: httpx.AsyncClient, backend: StorageDouble, bad: str, suffix: str
) -> None:
    method = "GET" if suffix in ("", "/events") else "POST"
    body = {"text": "hi"} if suffix == "/messages" else None
    response = await client.request(method, f"/api/sessions/{bad}{suffix}", json=body)
    assert error_of(response) == (404, "invalid_session_id")
    assert backend.reads == 0


@pytest.mark.parametrize(
    "path",
    [
        "/api/sessions/..%2Fetc",
        "/api/sessions/..%2F..%2Fetc%2Fpasswd/events",
        "/api/sessions/%2E%2E",
    ],
)
async def test_a_traversal_id_is_404(
    client: httpx.AsyncClient, backend: StorageDouble, path: str
) -> None:
    response = await client.get(httpx.URL(path))
    status, code = error_of(response)
    assert status == 404 and code in ("not_found", "invalid_session_id")
    assert backend.reads == 0


# -- resume ----------------------------------------------------------------


async def test_resuming_a_cold_session_makes_it_live_and_publishes_its_agent(
    client: httpx.AsyncClient, host: Host, publications: PublicationCounter
) -> None:
    created = await new_session(client)
    await host.close_session(created["id"])
    response = await client.post(f"/api/sessions/{created['id']}/resume")
    assert response.status_code == 200
    session = response.json()["session"]
    assert session["live"] is True and session["length"] == 1  # the end-seed marker
    assert publications.published.count(created["id"]) == 2


async def test_resuming_a_live_session_is_a_200_no_op(
    client: httpx.AsyncClient, host: Host, publications: PublicationCounter
) -> None:
    created = await new_session(client)
    agent = host.agent(created["id"])
    response = await client.post(f"/api/sessions/{created['id']}/resume")
    assert response.status_code == 200
    assert response.json()["session"] == created
    assert host.agent(created["id"]) is agent
    assert publications.published.count(created["id"]) == 1


# -- fork -----------------------------------------------------------------


async def test_forking_without_a_body_copies_the_whole_log(
    client: httpx.AsyncClient, host: Host, backend: StorageDouble
) -> None:
    created = await new_session(client)
    agent = host.agent(created["id"])
    assert agent is not None
    host.live.append(agent.session, PLAIN, {})
    response = await client.post(f"/api/sessions/{created['id']}/fork")
    assert response.status_code == 201
    child = response.json()["session"]
    assert child["lineage"] == {"parentId": created["id"], "forkedAt": 1}
    assert child["length"] == 2 and child["live"] is True
    assert await backend.cursor(child["id"]) == 2


async def test_forking_at_a_seq_copies_that_prefix(client: httpx.AsyncClient, host: Host) -> None:
    created = await new_session(client)
    agent = host.agent(created["id"])
    assert agent is not None
    host.live.append(agent.session, PLAIN, {})
    host.live.append(agent.session, PLAIN, {})
    response = await client.post(f"/api/sessions/{created['id']}/fork", json={"atSeq": 1})
    assert response.status_code == 201
    assert response.json()["session"]["lineage"]["forkedAt"] == 1


async def test_forking_a_cold_session_works(client: httpx.AsyncClient, host: Host) -> None:
    created = await new_session(client)
    await host.close_session(created["id"])
    response = await client.post(f"/api/sessions/{created['id']}/fork", json={"atSeq": 0})
    assert response.status_code == 201
    assert host.live.find(created["id"]) is None


async def test_a_fork_racing_a_delete_is_a_whole_child_or_a_404_and_nothing_more(
    client: httpx.AsyncClient, host: Host, backend: StorageDouble
) -> None:
    # Issue 35: a fork that lost the race answered 503 persistence_unavailable
    # (`tests/host/host/test_sessions.py` forces both interleavings). Each round
    # starts both requests together, either first, on a live or a cold parent.
    answers: Counter[tuple[str, int]] = Counter()
    for round_ in range(40):
        parent = await new_session(client)
        if round_ % 2:
            await host.close_session(parent["id"])
        fork = client.post(f"/api/sessions/{parent['id']}/fork")
        delete = client.delete(f"/api/sessions/{parent['id']}")
        first, second = (fork, delete) if round_ % 4 < 2 else (delete, fork)
        statuses: list[httpx.Response] = []

        async def send(request: Any, answers: list[httpx.Response] = statuses) -> None:
            answers.append(await request)

        async with anyio.create_task_group() as group:
            group.start_soon(send, first)
            group.start_soon(send, second)
        forked, deleted = sorted(statuses, key=lambda answer: answer.request.method != "POST")
        answers["fork", forked.status_code] += 1
        assert deleted.status_code == 204, deleted.text
        listed = (await client.get("/api/sessions")).json()["sessions"]
        children = [row for row in listed if (row["lineage"] or {}).get("parentId") == parent["id"]]
        if forked.status_code == 201:
            assert [row["id"] for row in children] == [forked.json()["session"]["id"]]
        else:
            assert error_of(forked) == (404, "session_not_found"), forked.text
            assert children == []
    assert set(answers) <= {("fork", 201), ("fork", 404)}, answers
    # Storage holds exactly the children that were answered 201 (nothing half-made).
    listed = (await client.get("/api/sessions")).json()["sessions"]
    stored = [summary.id for summary in await backend.list() if summary.lineage is not None]
    assert sorted(stored) == sorted(row["id"] for row in listed if row["lineage"])
    assert len(stored) == answers["fork", 201]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"atSeq": 5}, "atSeq"),
        ({"atSeq": -1}, "atSeq"),
        ({"atSeq": "1"}, "atSeq"),
        ({"atSeq": True}, "atSeq"),
        ({"at": 1}, "at"),
        ([1], ""),
    ],
)
async def test_a_bad_fork_body_is_422_naming_the_field(
    client: httpx.AsyncClient, body: Any, field: str
) -> None:
    created = await new_session(client)
    response = await client.post(f"/api/sessions/{created['id']}/fork", json=body)
    assert error_of(response) == (422, "invalid_body")
    assert field in response.json()["error"]["message"]


# -- messages --------------------------------------------------------------


async def test_a_message_is_queued_with_202(client: httpx.AsyncClient, host: Host) -> None:
    created = await new_session(client)
    response = await client.post(f"/api/sessions/{created['id']}/messages", json={"text": "hi"})
    assert response.status_code == 202
    body = response.json()
    assert body["queued"] is True and body["resumed"] is False
    assert body["session"]["id"] == created["id"]
    agent = host.agent(created["id"])
    assert agent is not None
    await wait_until(lambda: len(agent.session) == 3)
    assert agent.session.events[0].data == {"text": "hi", "source": {"kind": "user"}}


async def test_a_message_carries_the_readers_time_zone_into_the_log(
    client: httpx.AsyncClient, host: Host
) -> None:
    created = await new_session(client)
    response = await client.post(
        f"/api/sessions/{created['id']}/messages",
        json={"text": "at 9", "timeZone": "America/New_York"},
    )
    assert response.status_code == 202
    agent = host.agent(created["id"])
    assert agent is not None
    await wait_until(lambda: len(agent.session) >= 1)
    assert agent.session.events[0].data["timeZone"] == "America/New_York"  # type: ignore[index,call-overload]


async def test_a_message_to_a_cold_session_resumes_it_first(
    client: httpx.AsyncClient, host: Host, publications: PublicationCounter
) -> None:
    created = await new_session(client)
    await host.close_session(created["id"])
    response = await client.post(f"/api/sessions/{created['id']}/messages", json={"text": "hi"})
    assert response.status_code == 202
    assert response.json()["resumed"] is True
    assert host.agent(created["id"]) is not None
    assert publications.published.count(created["id"]) == 2


@pytest.mark.parametrize(
    ("content", "headers", "needle"),
    [
        (b'{"text": ""}', {"content-type": "application/json"}, "text"),
        (b'{"text": "   "}', {"content-type": "application/json"}, "text"),
        (b'{"text": 5}', {"content-type": "application/json"}, "text"),
        (b'{"text": "hi", "extra": 1}', {"content-type": "application/json"}, "extra"),
        (b"{}", {"content-type": "application/json"}, "text"),
        (b"", {}, "body"),
        (b"{not json", {"content-type": "application/json"}, "JSON"),
        (b'"just a string"', {"content-type": "application/json"}, "body"),
        (b'{"text": "hi", "timeZone": "Mars/Base"}', {"content-type": "application/json"}, "zone"),
        (b'{"text": "hi", "timeZone": "Europe"}', {"content-type": "application/json"}, "zone"),
        (b'{"text": "hi", "timeZone": 5}', {"content-type": "application/json"}, "timeZone"),
    ],
)
async def test_a_bad_message_body_is_422_invalid_body(
    client: httpx.AsyncClient, content: bytes, headers: dict[str, str], needle: str
) -> None:
    created = await new_session(client)
    response = await client.post(
        f"/api/sessions/{created['id']}/messages", content=content, headers=headers
    )
    assert error_of(response) == (422, "invalid_body")
    assert needle in response.json()["error"]["message"]


async def test_a_message_to_a_closing_agent_is_409(client: httpx.AsyncClient, host: Host) -> None:
    created = await new_session(client)
    agent = host.agent(created["id"])
    assert agent is not None
    await agent.aclose()  # closed, but still registered: the race with close_session
    response = await client.post(f"/api/sessions/{created['id']}/messages", json={"text": "hi"})
    assert error_of(response) == (409, "session_closed")


# -- events ----------------------------------------------------------------


async def seeded(client: httpx.AsyncClient, host: Host, count: int) -> str:
    created = await new_session(client)
    agent = host.agent(created["id"])
    assert agent is not None
    for n in range(count):
        host.live.append(agent.session, MARKED if n % 2 == 0 else PLAIN, {"n": n})
    await host.live.flush(agent.session)
    return str(created["id"])


async def test_events_without_paging_are_the_last_limit(
    client: httpx.AsyncClient, host: Host
) -> None:
    session_id = await seeded(client, host, 5)
    response = await client.get(f"/api/sessions/{session_id}/events", params={"limit": 2})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"header", "events", "views", "attached", "tail"}
    assert [event["seq"] for event in body["events"]] == [3, 4]
    assert body["views"] == {"4": {"marked": {"n": 4}, "seq": 4}}
    assert body["attached"] is True and body["tail"] == 5


async def test_events_from_a_seq_are_oldest_first(client: httpx.AsyncClient, host: Host) -> None:
    session_id = await seeded(client, host, 5)
    response = await client.get(
        f"/api/sessions/{session_id}/events", params={"from": 1, "limit": 2}
    )
    assert [event["seq"] for event in response.json()["events"]] == [1, 2]


async def test_events_before_a_seq_are_the_ones_just_below_it(
    client: httpx.AsyncClient, host: Host
) -> None:
    session_id = await seeded(client, host, 5)
    response = await client.get(
        f"/api/sessions/{session_id}/events", params={"before": 4, "limit": 2}
    )
    assert [event["seq"] for event in response.json()["events"]] == [2, 3]


async def test_cold_events_are_detached_with_views_and_publish_nothing(
    client: httpx.AsyncClient, host: Host, publications: PublicationCounter
) -> None:
    session_id = await seeded(client, host, 3)
    await host.close_session(session_id)
    published = list(publications.published)
    body = (await client.get(f"/api/sessions/{session_id}/events")).json()
    assert body["attached"] is False
    assert set(body["views"]) == {"0", "2"}
    assert publications.published == published
    assert host.live.find(session_id) is None


@pytest.mark.parametrize(
    ("params", "needle"),
    [
        ({"from": 1, "before": 2}, "not both"),
        ({"limit": 501}, "limit"),
        ({"limit": 0}, "limit"),
        ({"from": -1}, "from"),
        ({"before": "x"}, "before"),
    ],
)
async def test_bad_paging_is_422_invalid_query(
    client: httpx.AsyncClient, host: Host, params: dict[str, Any], needle: str
) -> None:
    session_id = await seeded(client, host, 1)
    response = await client.get(f"/api/sessions/{session_id}/events", params=params)
    assert error_of(response) == (422, "invalid_query")
    assert needle in response.json()["error"]["message"]


async def test_the_largest_page_is_500(client: httpx.AsyncClient, host: Host) -> None:
    session_id = await seeded(client, host, 2)
    response = await client.get(f"/api/sessions/{session_id}/events", params={"limit": 500})
    assert response.status_code == 200


# -- client modules, documents, routing errors ----------------------------


async def test_client_modules_list_each_plugin_module_with_its_url(
    client: httpx.AsyncClient, host: Host, tmp_path: Path
) -> None:
    module = tmp_path / "schedule.js"
    module.write_text("export function register() {}\n", encoding="utf-8")
    host.pm.register(
        UiPlugin([ClientModule(module, event_types=("schedule/change",))]), name="ui-test"
    )
    response = await client.get("/api/client-modules")
    assert response.status_code == 200
    assert response.json() == {
        "modules": [
            {
                "plugin": "ui-test",
                "url": "/plugins/ui-test/schedule.js",
                "eventTypes": ["schedule/change"],
            }
        ]
    }


async def test_no_plugin_means_no_client_modules(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/client-modules")).json() == {"modules": []}


async def test_the_openapi_document_is_served_under_api(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/openapi.json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    assert "/api/sessions/{session_id}/events" in paths
    assert "/" not in paths


@pytest.mark.parametrize("path", ["/docs", "/redoc", "/openapi.json"])
async def test_fastapis_default_documents_are_not_served(
    client: httpx.AsyncClient, path: str
) -> None:
    assert error_of(await client.get(path)) == (404, "not_found")


async def test_an_unknown_route_is_404(client: httpx.AsyncClient) -> None:
    assert error_of(await client.get("/api/nothing-here")) == (404, "not_found")


async def test_a_wrong_method_is_405_with_allow(client: httpx.AsyncClient) -> None:
    response = await client.delete("/api/sessions")
    assert error_of(response) == (405, "method_not_allowed")
    assert "GET" in response.headers["allow"]


async def test_an_unexpected_error_is_a_json_500_with_security_headers(
    client: httpx.AsyncClient, host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken() -> list[Any]:
        raise RuntimeError("boom")

    monkeypatch.setattr(host.catalogue, "list", broken)
    response = await client.get("/api/sessions")
    assert error_of(response) == (500, "internal_error")
    assert "boom" not in response.text
    assert response.headers["x-content-type-options"] == "nosniff"


async def test_a_closed_host_answers_503(client: httpx.AsyncClient, host: Host) -> None:
    await host.aclose()
    assert error_of(await client.post("/api/sessions")) == (503, "host_closed")


# -- the second edition: titles, search, delete, stop -----------------------


async def test_the_list_titles_sessions_by_their_first_message_and_searches_them(
    client: httpx.AsyncClient, host: Host
) -> None:
    trip, taxes, empty = [await new_session(client) for _ in range(3)]
    for created, text in ((trip, "Plan the TRIP to Lisbon\nby train"), (taxes, "file taxes")):
        await client.post(f"/api/sessions/{created['id']}/messages", json={"text": text})
    await wait_until(lambda: all(len(host.live.get(s["id"])) == 3 for s in (trip, taxes)))

    listed = (await client.get("/api/sessions")).json()["sessions"]
    found = (await client.get("/api/sessions", params={"q": "lisbon"})).json()["sessions"]
    blank = (await client.get("/api/sessions", params={"q": " "})).json()["sessions"]

    assert {row["id"]: row["title"] for row in listed} == {
        trip["id"]: "Plan the TRIP to Lisbon",
        taxes["id"]: "file taxes",
        empty["id"]: None,
    }
    assert [row["id"] for row in found] == [trip["id"]]
    assert len(blank) == 3
    too_long = await client.get("/api/sessions", params={"q": "x" * 201})
    assert error_of(too_long) == (422, "invalid_query")


async def test_renaming_answers_the_summary_once_the_title_is_stored(
    client: httpx.AsyncClient, backend: StorageDouble
) -> None:
    created = await new_session(client)

    response = await client.patch(f"/api/sessions/{created['id']}", json={"title": "  Groceries  "})

    assert response.status_code == 200
    assert response.json()["session"]["title"] == "Groceries"
    assert [(e.type, e.data) for e in backend.stored_events(created["id"])] == [
        ("session/title", {"title": "Groceries"})
    ]


async def test_renaming_a_cold_session_keeps_it_cold(
    client: httpx.AsyncClient, host: Host, publications: PublicationCounter, clock: FakeClock
) -> None:
    created = await new_session(client)
    await host.close_session(created["id"])

    response = await client.patch(f"/api/sessions/{created['id']}", json={"title": "Later"})

    assert response.status_code == 200
    assert response.json()["session"] | {"createdAt": 0} == {
        "id": created["id"],
        "createdAt": 0,
        "live": False,
        "length": 1,
        "lineage": None,
        "title": "Later",
        "plugins": None,
        "updatedAt": clock.wall_ms(),  # the rename is its last change
    }
    assert host.agent(created["id"]) is None
    assert publications.published.count(created["id"]) == 1


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"title": ""},
        {"title": "   "},
        {"title": "two\nlines"},
        {"title": 7},
        {"title": "x" * 201},
        {"title": "ok", "extra": 1},
        {"title": "a\u0000b"},  # PostgreSQL's text columns refuse NUL: refused at the door
        {"title": "\u001b]0;owned\u0007"},  # a terminal's escape
        {"title": "del\u007f"},
        {"title": "c1\u0085c1"},
    ],
)
async def test_a_bad_title_is_422_invalid_body(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    created = await new_session(client)
    response = await client.patch(f"/api/sessions/{created['id']}", json=body)
    assert error_of(response) == (422, "invalid_body")


async def test_bidi_controls_are_dropped_from_titles_set_or_derived_not_refused(
    client: httpx.AsyncClient, host: Host
) -> None:
    # Issue 35: U+202E in a title reversed the rest of it on every page. Unlike the
    # C0/C1 controls above (422), they are invisible and harmless once dropped.
    named, derived = await new_session(client), await new_session(client)
    renamed = await client.patch(
        f"/api/sessions/{named['id']}", json={"title": " \u2067report\u202eexe.pdf\u2069 "}
    )
    assert renamed.status_code == 200
    assert renamed.json()["session"]["title"] == "reportexe.pdf"
    only_controls = await client.patch(f"/api/sessions/{named['id']}", json={"title": "\u202e"})
    assert error_of(only_controls) == (422, "invalid_body")
    text = "\u202eevil \u200fthen\nmore"
    posted = await client.post(f"/api/sessions/{derived['id']}/messages", json={"text": text})
    assert posted.status_code == 202
    listed = {
        row["id"]: row["title"] for row in (await client.get("/api/sessions")).json()["sessions"]
    }
    assert (listed[named["id"]], listed[derived["id"]]) == ("reportexe.pdf", "evil then")
    agent = host.agent(derived["id"])
    assert agent is not None
    assert [e.data["text"] for e in agent.session.events if e.type == "message/user"] == [text]


async def test_renaming_an_unknown_session_is_404(client: httpx.AsyncClient) -> None:
    response = await client.patch("/api/sessions/missing", json={"title": "x"})
    assert error_of(response) == (404, "session_not_found")
    response = await client.patch("/api/sessions/..%2Fx", json={"title": "x"})
    assert response.status_code == 404


async def test_deleting_closes_a_live_session_and_takes_it_out_of_the_list(
    client: httpx.AsyncClient, host: Host, backend: StorageDouble
) -> None:
    kept, deleted = await new_session(client), await new_session(client)
    agent = host.agent(deleted["id"])
    assert agent is not None

    response = await client.delete(f"/api/sessions/{deleted['id']}")

    assert response.status_code == 204 and response.content == b""
    assert agent.closed
    listed = (await client.get("/api/sessions")).json()["sessions"]
    assert [row["id"] for row in listed] == [kept["id"]]
    assert error_of(await client.get(f"/api/sessions/{deleted['id']}")) == (
        404,
        "session_not_found",
    )
    assert error_of(await client.delete(f"/api/sessions/{deleted['id']}")) == (
        404,
        "session_not_found",
    )
    await backend.restore(deleted["id"])  # what `dsh sessions restore ID` does
    assert (await client.get(f"/api/sessions/{deleted['id']}")).status_code == 200


async def test_restore_brings_a_deleted_session_back_into_the_list_cold_and_unchanged(
    client: httpx.AsyncClient, host: Host
) -> None:
    created = await new_session(client)
    assert (
        await client.patch(f"/api/sessions/{created['id']}", json={"title": "Kept"})
    ).status_code == 200
    before = (await client.get(f"/api/sessions/{created['id']}/events")).json()["events"]
    assert (await client.delete(f"/api/sessions/{created['id']}")).status_code == 204

    response = await client.post(f"/api/sessions/{created['id']}/restore")

    assert response.status_code == 200
    restored = response.json()["session"]
    assert (restored["id"], restored["live"], restored["title"]) == (created["id"], False, "Kept")
    assert restored["length"] == len(before)
    listed = [row["id"] for row in (await client.get("/api/sessions")).json()["sessions"]]
    assert created["id"] in listed
    after = (await client.get(f"/api/sessions/{created['id']}/events")).json()["events"]
    assert after == before
    assert host.agent(created["id"]) is None, "restoring starts no agent"


async def test_restoring_what_the_trash_does_not_hold_is_404_and_a_stored_id_is_409(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/api/sessions/0123456789abcdef/restore")
    assert error_of(response) == (404, "session_not_found")
    assert "only a deleted Session can be restored" in response.json()["error"]["message"]
    created = await new_session(client)
    assert (await client.delete(f"/api/sessions/{created['id']}")).status_code == 204
    assert (await client.post(f"/api/sessions/{created['id']}/restore")).status_code == 200
    response = await client.post(f"/api/sessions/{created['id']}/restore")
    assert error_of(response) == (404, "session_not_found"), "restored once, the trash is empty"
    response = await client.post("/api/sessions/..%2Fx/restore")
    assert response.status_code == 404


async def test_restoring_over_a_stored_session_of_that_id_is_409(
    client: httpx.AsyncClient, backend: StorageDouble
) -> None:
    created = await new_session(client)
    assert (await client.delete(f"/api/sessions/{created['id']}")).status_code == 204
    stored = await backend.inspect_trashed(created["id"])
    assert stored is not None
    await backend.initialize(stored.header, list(stored.events))  # the id is stored again

    response = await client.post(f"/api/sessions/{created['id']}/restore")

    assert error_of(response) == (409, "session_exists")
    assert "there is nothing to restore" in response.json()["error"]["message"]
    assert await backend.inspect_trashed(created["id"]) is not None, "the trash keeps it"


async def test_deleting_when_the_trash_holds_that_id_is_409(
    client: httpx.AsyncClient, host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dsh.persistence.errors import SessionExists

    created = await new_session(client)

    async def occupied(session_id: str) -> None:
        raise SessionExists(f"the trash already holds a session {session_id}")

    monkeypatch.setattr(host.sessions, "delete", occupied)
    response = await client.delete(f"/api/sessions/{created['id']}")
    assert error_of(response) == (409, "trash_conflict")
    assert "restore or remove it first" in response.json()["error"]["message"]


async def test_cancel_stops_the_running_turn_and_says_whether_one_ran(
    client: httpx.AsyncClient, host: Host, model: StreamingModel
) -> None:
    created = await new_session(client)
    model.gate = anyio.Event()
    await client.post(f"/api/sessions/{created['id']}/messages", json={"text": "slowly"})
    await wait_until(lambda: model.calls == 1)

    response = await client.post(f"/api/sessions/{created['id']}/cancel")
    again = await client.post(f"/api/sessions/{created['id']}/cancel", json={})

    assert response.status_code == 200 and response.json() == {"cancelled": True}
    assert again.json() == {"cancelled": False}
    end = host.live.get(created["id"]).events[-1]
    assert end.type == "turn/end" and end.data["error"]["code"] == "cancelled"  # type: ignore[index,call-overload]


async def test_cancel_on_a_cold_or_unknown_session(client: httpx.AsyncClient, host: Host) -> None:
    created = await new_session(client)
    await host.close_session(created["id"])

    response = await client.post(f"/api/sessions/{created['id']}/cancel")

    assert response.json() == {"cancelled": False} and host.agent(created["id"]) is None
    assert error_of(await client.post("/api/sessions/missing/cancel")) == (
        404,
        "session_not_found",
    )
