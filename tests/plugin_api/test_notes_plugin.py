"""Every hook of the plugin API, end to end, through a plugin installed as a distribution.

The `notes` plugin (`notes_plugin.py`) is found through a real entry point,
enabled by an overlay file, and driven through the HTTP API, a WebSocket of a
real server, the Host and the `dsh` command line, with JSONL storage on disk.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from websockets.asyncio.client import connect

from dsh.cli import main
from dsh.persistence import JsonlBackend
from dsh.plugins.overlay import load_overlay
from dsh.testing import FakeModel, Host, running_host, settled
from dsh.web import WebServer, WebSettings, create_app
from tests.support.deadlines import WAIT

from ..host.fixtures.distributions import FakeSite

pytestmark = pytest.mark.anyio

TOKEN = "notes-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
DUE = 1_767_225_900_000


@dataclass
class World:
    host: Host
    http: httpx.AsyncClient
    data_dir: Path
    overlay: Path
    backend: JsonlBackend


#: The plugin as written against the current API, and as written against the second
#: edition (a frozen copy that must keep loading; the names it uses that the third
#: edition renamed warn, which these tests allow, and `test_public_api` checks).
EDITIONS = [
    pytest.param("tests.plugin_api.notes_plugin", id="current"),
    pytest.param(
        "tests.plugin_api.second_edition.notes_plugin",
        id="second-edition",
        marks=pytest.mark.filterwarnings(
            "ignore:.*deprecated since dsh's third edition:DeprecationWarning"
        ),
    ),
]


@pytest.fixture(params=EDITIONS)
def overlay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Path:
    site = FakeSite(tmp_path / "site", monkeypatch)
    site.install("dsh-notes", {"notes": f"{request.param}:NotesPlugin"})
    path = tmp_path / "overlay.toml"
    path.write_text("[plugins.notes]\nmax_notes = 2\n", encoding="utf-8")
    return path


@pytest.fixture
async def world(tmp_path: Path, overlay: Path) -> AsyncIterator[World]:
    data_dir = tmp_path / "data"
    backend = JsonlBackend(data_dir)
    specs = load_overlay(overlay).plugins
    async with running_host(backend=backend, model=FakeModel(), plugins=specs) as host:
        app = create_app(host, WebSettings(token=TOKEN))
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1:8765", headers=AUTH
        ) as http:
            yield World(host, http, data_dir, overlay, backend)


async def new_session(world: World) -> str:
    response = await world.http.post("/api/sessions")
    assert response.status_code == 201
    session_id: str = response.json()["session"]["id"]
    return session_id


async def act(world: World, session_id: str, action: str, **args: Any) -> httpx.Response:
    return await world.http.post(
        f"/api/sessions/{session_id}/actions",
        json={"plugin": "notes", "action": action, "args": args},
    )


async def stored_notes(world: World, session_id: str) -> list[Any]:
    stored = await world.backend.inspect(session_id)
    assert stored is not None
    return [event.data for event in stored.events if event.type == "notes/change"]


async def test_an_action_answers_once_its_change_is_stored(world: World) -> None:
    session_id = await new_session(world)

    response = await act(world, session_id, "add", text="buy milk", due=DUE)

    assert response.status_code == 200
    assert response.json() == {"result": {"notes": 1}}
    assert await stored_notes(world, session_id) == [{"op": "add", "text": "buy milk", "due": DUE}]


async def test_the_session_shows_each_plugin_state_live_and_cold(world: World) -> None:
    session_id = await new_session(world)
    before = (await world.http.get(f"/api/sessions/{session_id}")).json()
    assert before["plugins"] == {}  # None before the first note: left out
    await act(world, session_id, "add", text="call mum")

    live = (await world.http.get(f"/api/sessions/{session_id}")).json()
    await world.host.close_session(session_id)
    cold = (await world.http.get(f"/api/sessions/{session_id}")).json()

    assert live["plugins"] == {"notes": {"notes": [{"text": "call mum"}]}}
    assert live["agent"]["tools"] == ["note_add"]
    assert cold["plugins"] == live["plugins"]
    assert cold["live"] is False and world.host.agent(session_id) is None


async def test_the_session_list_shows_each_live_sessions_compact_summary(world: World) -> None:
    used, unused = await new_session(world), await new_session(world)
    await act(world, used, "add", text="call mum", due=DUE)
    await act(world, used, "add", text="buy milk")

    rows = {row["id"]: row for row in (await world.http.get("/api/sessions")).json()["sessions"]}
    await world.host.close_session(used)
    cold = (await world.http.get("/api/sessions", params={"q": used})).json()["sessions"]

    assert rows[used]["plugins"] == {"notes": {"notes": 2, "due": DUE}}
    assert rows[unused]["plugins"] == {}
    assert [row["plugins"] for row in cold] == [None]  # cold: not read for a list


async def test_refusals_have_their_status_code_and_message(world: World) -> None:
    session_id = await new_session(world)

    bad = await act(world, session_id, "add", text="")
    extra = await act(world, session_id, "add", text="x", colour="red")
    unknown_action = await act(world, session_id, "fly")
    unknown_plugin = await world.http.post(
        f"/api/sessions/{session_id}/actions", json={"plugin": "nope", "action": "add"}
    )
    nothing = await act(world, session_id, "clear")
    await act(world, session_id, "add", text="one")
    await act(world, session_id, "add", text="two")
    full = await act(world, session_id, "add", text="three")
    no_session = await act(world, "missing", "clear")
    bad_body = await world.http.post(
        f"/api/sessions/{session_id}/actions", json={"plugin": "notes", "args": []}
    )

    assert bad.status_code == 422
    assert bad.json()["error"]["code"] == "invalid_arguments"
    assert bad.json()["error"]["message"].startswith("text: String should have at least 1")
    assert extra.status_code == 422 and "colour: Extra inputs" in extra.json()["error"]["message"]
    assert unknown_action.status_code == 404
    assert unknown_action.json()["error"] == {
        "code": "unknown_action",
        "message": "plugin 'notes' has no action 'fly'",
    }
    assert unknown_plugin.status_code == 404
    assert unknown_plugin.json()["error"]["code"] == "unknown_plugin"
    assert (nothing.status_code, nothing.json()["error"]["code"]) == (409, "no_notes")
    assert (full.status_code, full.json()["error"]["code"]) == (409, "too_many_notes")
    assert (no_session.status_code, no_session.json()["error"]["code"]) == (
        404,
        "session_not_found",
    )
    assert bad_body.status_code == 422 and "field 'action'" in bad_body.json()["error"]["message"]
    assert [note["text"] for note in await stored_notes(world, session_id)] == ["one", "two"]


async def test_an_action_on_a_cold_session_resumes_it_first(world: World) -> None:
    session_id = await new_session(world)
    await world.host.close_session(session_id)

    response = await act(world, session_id, "add", text="while away")

    assert response.status_code == 200
    agent = world.host.agent(session_id)
    assert agent is not None and agent.is_root
    assert await stored_notes(world, session_id) == [{"op": "add", "text": "while away"}]


async def test_the_wake_time_is_the_earliest_due_note_read_from_the_log(world: World) -> None:
    session_id = await new_session(world)
    assert await world.host.session_wake_at(session_id) is None
    await act(world, session_id, "add", text="later", due=DUE + 5000)
    await act(world, session_id, "add", text="sooner", due=DUE)

    live = await world.host.session_wake_at(session_id)
    await world.host.close_session(session_id)

    assert live == DUE
    assert await world.host.session_wake_at(session_id) == DUE
    # A cold Session's stored log is read from a worker thread, as the host reads it.
    assert await world.host.catalogue.with_stored_log(session_id, world.host.wake_at) == DUE


async def test_the_plugin_tool_and_its_receipt_work_in_a_turn(world: World) -> None:
    session_id = await new_session(world)
    agent = world.host.agent(session_id)
    assert agent is not None and isinstance(world.host.model, FakeModel)
    world.host.model.add(FakeModel.tool_call("note_add", {"text": "from the model"}), "noted")

    agent.submit("note this")
    await settled(agent)
    page = (await world.http.get(f"/api/sessions/{session_id}/events")).json()

    assert await stored_notes(world, session_id) == [{"op": "add", "text": "from the model"}]
    seq = next(event["seq"] for event in page["events"] if event["type"] == "notes/change")
    assert page["views"][str(seq)] == {"note": "from the model"}


async def test_state_frames_follow_the_flush_that_changed_the_state(world: World) -> None:
    session_id = await new_session(world)
    settings = WebSettings(token=TOKEN, port=0)
    server = WebServer(create_app(world.host, settings), settings)
    frames: list[dict[str, Any]] = []
    async with anyio.create_task_group() as group:
        group.start_soon(server.run_until_stopped)
        with anyio.fail_after(WAIT):
            await server.listening.wait()
        url = f"ws://127.0.0.1:{server.port}/api/sessions/{session_id}/live?token={TOKEN}"
        async with connect(url, origin=f"http://127.0.0.1:{server.port}") as ws:
            frames.append(json.loads(await ws.recv()))  # hello
            await act(world, session_id, "add", text="watched")
            with anyio.fail_after(WAIT):
                while not any(frame["kind"] == "state" for frame in frames):
                    frames.append(json.loads(await ws.recv()))
            await act(world, session_id, "clear")
            with anyio.fail_after(WAIT):
                while sum(frame["kind"] == "state" for frame in frames) < 2:
                    frames.append(json.loads(await ws.recv()))
        server.stop()

    states = [frame for frame in frames if frame["kind"] == "state"]
    assert states == [
        {"kind": "state", "plugin": "notes", "state": {"notes": [{"text": "watched"}]}},
        {"kind": "state", "plugin": "notes", "state": {"notes": []}},
    ]
    added = next(i for i, frame in enumerate(frames) if frame.get("event", {}).get("type"))
    assert added < frames.index(states[0])  # the raw event first, the state after its flush


async def test_the_plugin_command_reads_stored_notes_without_starting_an_agent(
    world: World,
) -> None:
    first, second = await new_session(world), await new_session(world)
    await act(world, first, "add", text="first note", due=DUE)
    await act(world, second, "add", text="second note")
    published = len(world.host.agents())

    everything = await run_dsh(
        "--overlay", str(world.overlay), "notes", "--data-dir", str(world.data_dir)
    )
    one = await run_dsh(
        "--overlay",
        str(world.overlay),
        "notes",
        "--session",
        first,
        "--data-dir",
        str(world.data_dir),
    )
    unknown = await run_dsh(
        "--overlay",
        str(world.overlay),
        "notes",
        "--session",
        "nope",
        "--data-dir",
        str(world.data_dir),
    )
    nowhere = await run_dsh(
        "--overlay", str(world.overlay), "notes", "--session", "nope", "--data-dir", "/nowhere"
    )

    assert everything[0] == 0
    assert f"{first}  first note   {DUE}" in everything[1]
    assert f"{second}  second note  -" in everything[1]
    assert one[0] == 0 and "second note" not in one[1] and "first note" in one[1]
    assert unknown == (1, "", "dsh: error: no session 'nope'\n")
    assert nowhere == (
        1,
        "",
        "dsh: error: the data dir /nowhere does not exist; pass the one dsh web uses with "
        "--data-dir DIR (or set $DSH_DATA_DIR)\n",
    )
    assert len(world.host.agents()) == published


async def run_dsh(*argv: str) -> tuple[int, str, str]:
    """`dsh ...` in a worker thread: the command runs its own event loop."""
    out, err = io.StringIO(), io.StringIO()
    code = await anyio.to_thread.run_sync(lambda: main(list(argv), stdout=out, stderr=err))
    return code, out.getvalue(), err.getvalue()
