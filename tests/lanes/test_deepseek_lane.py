"""Issue 21's report, as a lane: a DeepSeek V4 thinking model sets a reminder through `dsh web`.

A real `dsh web` process with the schedule plugins and `--model openai`,
configured only by its overlay (`[host.openai]` with `profile = "deepseek"`),
talks to a loopback server that behaves as DeepSeek documents thinking mode:
it streams reasoning before the answer and refuses (HTTP 400) any request
whose tool-call turn lacks the reasoning it streamed. The model calls
`schedule_create`; the reminder is created; the next request carries the
reasoning back and is answered, so the turn ends `ok` — before issue 21 it
ended with the 400. The WebSocket sees the reasoning on its own channel.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio.from_thread
import pytest

from tests.host.models.fake_openai import FakeOpenAIServer, running_server
from tests.host.models.fake_providers import DEEPSEEK, Call, provider
from tests.lanes.observe import LiveFrames, changes
from tests.support.webhost import WebHost

pytestmark = pytest.mark.lane

THOUGHT = "They want a reminder in an hour to stretch; schedule_create does that."
# The environment must not pick another server, model or key for this process.
CLEAN_ENV = {
    name: ""
    for name in (
        "DSH_MODEL_BASE_URL",
        "DSH_MODEL",
        "DSH_MODEL_PROFILE",
        "DSH_API_KEY",
        "DEEPSEEK_API_KEY",
        "OPENAI_API_KEY",
    )
}


@pytest.fixture
def deepseek_server() -> Iterator[tuple[anyio.from_thread.BlockingPortal, FakeOpenAIServer]]:
    with anyio.from_thread.start_blocking_portal() as portal:
        server_context = portal.wrap_async_context_manager(running_server())
        with server_context as server:
            yield portal, server


def write_overlay(directory: Path, base_url: str) -> Path:
    directory.mkdir(parents=True)
    path = directory / "overlay.toml"
    path.write_text(
        f"""
[host]
model = "openai"

[host.openai]
base_url = "{base_url}"
model = "deepseek-v4-flash"
profile = "deepseek"

[plugins.tool-schedule]
[plugins.client-ui-schedule]
""",
        encoding="utf-8",
    )
    return path


def test_a_deepseek_thinking_model_sets_a_reminder_and_the_turn_ends_ok(
    deepseek_server: tuple[anyio.from_thread.BlockingPortal, FakeOpenAIServer], tmp_path: Path
) -> None:
    portal, server = deepseek_server
    deepseek = provider(DEEPSEEK)
    create = Call("call_1", "schedule_create", {"prompt": "stretch", "after_seconds": 3600})
    portal.call(
        server.push,
        deepseek.answer(reasoning=THOUGHT, calls=[create]),
        deepseek.answer(reasoning="Created; say so.", content="Reminder set for an hour from now."),
    )
    overlay = write_overlay(tmp_path / "overlay", server.base_url)

    with WebHost.start(tmp_path / "data", overlay=overlay, extra_env=CLEAN_ENV) as web:
        session_id = web.create_session()
        with LiveFrames.open(web, session_id) as live:
            posted = web.post(
                f"/api/sessions/{session_id}/messages", {"text": "remind me in an hour to stretch"}
            )
            assert posted.status_code == 202, posted.text
            frames = live.until(
                lambda got: any(f.get("event", {}).get("type") == "turn/end" for f in got),
                what="the turn to end",
            )
        events = web.all_events(session_id)["events"]

    assert deepseek.refusals == []
    assert len(server.requests) == 2
    turn_end = next(e for e in events if e["type"] == "turn/end")
    assert turn_end["data"] == {"status": "ok"}
    (created,) = changes(events, "create")
    assert created["data"]["record"]["prompt"] == "stretch"
    assistants = [e["data"] for e in events if e["type"] == "message/assistant"]
    assert [(a["text"], a.get("reasoning")) for a in assistants] == [
        ("", THOUGHT),
        ("Reminder set for an hour from now.", "Created; say so."),
    ]
    second = server.requests[1].json()
    assert [m.get("reasoning_content") for m in second["messages"] if m["role"] == "assistant"] == [
        THOUGHT
    ]
    deltas = [f for f in frames if f["kind"] == "delta"]
    assert "".join(f["text"] for f in deltas if f["channel"] == "reasoning") == (
        THOUGHT + "Created; say so."
    )
    assert "".join(f["text"] for f in deltas if f["channel"] == "answer") == (
        "Reminder set for an hour from now."
    )
