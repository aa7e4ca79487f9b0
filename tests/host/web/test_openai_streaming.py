"""Streaming end to end: a real OpenAI-compatible server on loopback → the openai
adapter → an agent → `dsh web` → a WebSocket client.

The client sees the assistant's text grow as ephemeral `delta` frames, then the
stored `message/assistant` event, whose text is exactly the deltas joined; a
thinking model's reasoning arrives on its own `"channel": "reasoning"`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import JsonValue
from websockets.asyncio.client import connect

from dsh.agents.tools import Tool, ToolArguments, ToolContext
from dsh.host.host import Host
from dsh.models.openai import OpenAIAdapter
from dsh.persistence.memory import MemoryBackend
from dsh.web import create_app
from dsh.web.server import WebServer
from dsh.web.settings import WebSettings
from tests.support.deadlines import WAIT

from ..models.fake_openai import FakeOpenAIServer, chunk, running_server, sse_reply
from ..models.fake_providers import DEEPSEEK, Call, provider
from .conftest import TOKEN, receive_json

pytestmark = pytest.mark.anyio


@pytest.fixture
async def openai_server() -> AsyncIterator[FakeOpenAIServer]:
    async with running_server() as server:
        yield server


async def test_deltas_reach_the_browser_and_the_stored_event_supersedes_them(
    openai_server: FakeOpenAIServer, static_dir: Path
) -> None:
    openai_server.push(
        sse_reply(chunk("Hel"), chunk("lo, "), chunk("world"), chunk(finish_reason="stop"))
    )
    adapter = OpenAIAdapter.from_env(
        {"base_url": f"http://127.0.0.1:{openai_server.port}/v1", "model": "test-model"}, env={}
    )
    settings = WebSettings(token=TOKEN, port=0, static_dir=static_dir)
    async with Host(backend=MemoryBackend(), model=adapter) as host:
        server = WebServer(create_app(host, settings), settings)
        async with anyio.create_task_group() as group:
            group.start_soon(server.run_until_stopped)
            with anyio.fail_after(WAIT):
                await server.listening.wait()
            agent = await host.create_session()
            url = f"ws://127.0.0.1:{server.port}/api/sessions/{agent.session.id}/live?token={TOKEN}"
            frames: list[dict[str, Any]] = []
            async with connect(url, origin=f"http://127.0.0.1:{server.port}") as ws:  # type: ignore[arg-type]
                assert (await receive_json(ws))["kind"] == "hello"
                agent.submit("greet me")
                while not frames or frames[-1].get("event", {}).get("type") != "turn/end":
                    frames.append(await receive_json(ws))
            server.stop()

    kinds = [
        frame["kind"] if frame["kind"] == "delta" else frame["event"]["type"] for frame in frames
    ]
    assert kinds == ["message/user", "delta", "delta", "delta", "message/assistant", "turn/end"]
    deltas = "".join(frame["text"] for frame in frames if frame["kind"] == "delta")
    stored = frames[4]["event"]["data"]
    assert deltas == stored["text"] == "Hello, world"
    assert openai_server.requests[0].json()["stream"] is True
    assert agent.session.events[1].data == stored


class NoteArgs(ToolArguments):
    text: str


class NoteTool(Tool[NoteArgs]):
    name = "note"
    description = "keeps a note"
    arguments = NoteArgs

    async def run(self, args: NoteArgs, ctx: ToolContext) -> JsonValue:
        return {"kept": args.text}


async def test_deepseek_thinking_streams_reasoning_on_its_own_channel_through_dsh_web(
    openai_server: FakeOpenAIServer, static_dir: Path
) -> None:
    deepseek = provider(DEEPSEEK)
    openai_server.push(
        deepseek.answer(
            reasoning="I should note it.", calls=[Call("c1", "note", {"text": "milk"})]
        ),
        deepseek.answer(reasoning="Noted; confirm.", content="Noted: milk."),
    )
    adapter = OpenAIAdapter.from_env(
        {"base_url": openai_server.base_url, "model": "deepseek-v4-flash", "profile": "deepseek"},
        env={},
    )
    settings = WebSettings(token=TOKEN, port=0, static_dir=static_dir)
    async with Host(backend=MemoryBackend(), model=adapter) as host:
        server = WebServer(create_app(host, settings), settings)
        async with anyio.create_task_group() as group:
            group.start_soon(server.run_until_stopped)
            with anyio.fail_after(WAIT):
                await server.listening.wait()
            agent = await host.create_session()
            agent.tools.register(NoteTool())
            url = f"ws://127.0.0.1:{server.port}/api/sessions/{agent.session.id}/live?token={TOKEN}"
            frames: list[dict[str, Any]] = []
            async with connect(url, origin=f"http://127.0.0.1:{server.port}") as ws:  # type: ignore[arg-type]
                assert (await receive_json(ws))["kind"] == "hello"
                agent.submit("remember milk")
                while not frames or frames[-1].get("event", {}).get("type") != "turn/end":
                    frames.append(await receive_json(ws))
            server.stop()

    def shape(frame: dict[str, Any]) -> str:
        if frame["kind"] == "delta":
            return f"delta:{frame['channel']}"
        return str(frame["event"]["type"])

    shapes = [shape(frame) for frame in frames]
    assert [s for i, s in enumerate(shapes) if i == 0 or s != shapes[i - 1]] == [
        "message/user",
        "delta:reasoning",
        "message/assistant",
        "tool/result",
        "delta:reasoning",
        "delta:answer",
        "message/assistant",
        "turn/end",
    ]
    reasoning = "".join(f["text"] for f in frames if shape(f) == "delta:reasoning")
    answer = "".join(f["text"] for f in frames if shape(f) == "delta:answer")
    assert (reasoning, answer) == ("I should note it.Noted; confirm.", "Noted: milk.")
    stored = [f["event"]["data"] for f in frames if shape(f) == "message/assistant"]
    assert [(data["text"], data["reasoning"]) for data in stored] == [
        ("", "I should note it."),
        ("Noted: milk.", "Noted; confirm."),
    ]
    assert deepseek.refusals == []
    passed_back = openai_server.requests[1].json()["messages"]
    assert [m.get("reasoning_content") for m in passed_back if m["role"] == "assistant"] == [
        "I should note it."
    ]
