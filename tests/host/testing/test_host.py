"""`dsh.testing`: a test Host, loading a plugin into it, waiting for an agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsh import Agent, PluginContext, hookimpl
from dsh.plugins.errors import PluginConfigError, PluginLoadError
from dsh.testing import (
    FakeClock,
    FakeModel,
    FaultyBackend,
    MemoryBackend,
    load_plugin,
    running_host,
    settled,
)

from ..fixtures.distributions import FakeSite
from ..fixtures.plugins import Configured, WrapsAHook

pytestmark = pytest.mark.anyio


class Watcher:
    def __init__(self, context: PluginContext[None]) -> None:
        self.context = context
        self.seen: list[str] = []

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        self.seen.append(agent.session.id)
        self.context.install(agent).add(lambda: self.seen.append(f"unwound {agent.session.id}"))


async def test_a_running_host_uses_fakes_unless_told_otherwise() -> None:
    async with running_host() as host:
        assert isinstance(host.model, FakeModel)
        assert isinstance(host.clock, FakeClock)
        assert isinstance(host.backend, MemoryBackend)
        assert host.cwd == "/dsh-test"
    faulty = FaultyBackend(MemoryBackend())
    async with running_host(backend=faulty, clock=FakeClock(5)) as host:
        assert host.backend is faulty and host.clock.wall_ms() == 5


async def test_a_plugin_class_loads_and_its_disposer_unloads_it() -> None:
    async with running_host() as host:
        plugin, unload = await load_plugin(host, Watcher)
        agent = await host.create_session()

        assert plugin.seen == [agent.session.id]
        assert "Watcher" in host.loader.loaded
        await unload()
        assert plugin.seen == [agent.session.id, f"unwound {agent.session.id}"]
        assert host.pm.get_plugin("Watcher") is None


async def test_a_plugin_class_gets_its_config_validated_like_an_overlay_table() -> None:
    async with running_host() as host:
        plugin, _ = await load_plugin(host, Configured, name="greeter", config={"greeting": "hi"})
        assert plugin.context.config == Configured.Config(greeting="hi")
        with pytest.raises(PluginConfigError, match="greeting: Field required"):
            await load_plugin(host, Configured, name="other")
        with pytest.raises(PluginLoadError, match="as a hook wrapper"):
            await load_plugin(host, WrapsAHook)


async def test_an_installed_plugin_loads_by_its_entry_point_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeSite(tmp_path / "site", monkeypatch).plugin("recorder", "Recorder")
    async with running_host() as host:
        plugin, unload = await load_plugin(host, "recorder")
        agent = await host.create_session()

        assert getattr(plugin, "published") == [agent]  # noqa: B009
        assert host.loader.loaded["recorder"].distribution == "dsh-recorder"
        await unload()
        with pytest.raises(TypeError, match="drop name="):
            await load_plugin(host, "recorder", name="x")  # type: ignore[call-overload]


async def test_settled_waits_for_every_queued_turn() -> None:
    model = FakeModel(["one", "two"])
    async with running_host(model=model) as host:
        agent = await host.create_session()
        await settled(agent)  # nothing to do: returns at once
        agent.submit("first")
        agent.submit("second")

        await settled(agent)

        assert [event.type for event in agent.session.events].count("turn/end") == 2
        assert model.remaining == 0


async def test_a_fake_model_replays_its_script_and_records_each_request() -> None:
    def count(request: Any) -> Any:
        return FakeModel.tool_call("missing", "{not json", id="c9", text=str(len(request.messages)))

    model = FakeModel([FakeModel.tool_call("echo", {"text": "hi"}), "plain"])
    model.add(count)
    deltas: list[str] = []
    async with running_host(model=model) as host:
        agent = await host.create_session()
        agent.add_delta_listener(deltas.append)
        agent.submit("go")
        await settled(agent)
        agent.submit("again")
        await settled(agent)

    types = [event.type for event in agent.session.events]
    assert types.count("tool/result") == 2
    assert len(model.requests) == 4
    assert model.requests[0].messages[-1].text == "go"
    assert deltas == ["plain", "5"]
    ends = [event.data for event in agent.session.events if event.type == "turn/end"]
    assert ends[-1] == {
        "status": "error",
        "error": {
            "code": "model_unavailable",
            "message": "the fake model's script is used up after 3 replies",
        },
    }
    calls = [event.data for event in agent.session.events if event.type == "message/assistant"]
    assert calls[0]["toolCalls"] == [
        {"id": "call-echo", "name": "echo", "arguments": {"text": "hi"}}
    ]
    assert calls[2]["toolCalls"][0]["arguments"] == "{not json"
