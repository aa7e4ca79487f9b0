"""`dsh.testing.plugin_host`: one plugin in a test Host, a web client, a WebSocket, strict mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.testing import (
    TEST_TOKEN,
    FakeModel,
    StrictModeError,
    WebSocketClosed,
    load_plugin,
    plugin_host,
    running_host,
    settled,
)

from ..fixtures.distributions import FakeSite
from ..fixtures.plugins import Recorder, ZoneTools

pytestmark = pytest.mark.anyio


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSite:
    return FakeSite(tmp_path / "site", monkeypatch)


async def test_a_class_an_entry_point_names_loads_under_the_entry_point_name(
    site: FakeSite,
) -> None:
    site.plugin("tool-zone", "ZoneTools")
    async with running_host() as host:
        await load_plugin(host, ZoneTools)
        await load_plugin(host, Recorder)  # no entry point names it: its class name

        assert list(host.loader.loaded) == ["tool-zone", "Recorder"]


async def test_a_plugin_host_answers_http_and_websocket_in_process(site: FakeSite) -> None:
    site.plugin("tool-zone", "ZoneTools")
    model = FakeModel([FakeModel.tool_call("zone_now"), "it is late"])
    async with plugin_host("tool-zone", model=model) as test:
        assert test.name == "tool-zone" and isinstance(test.plugin, ZoneTools)
        async with test.client() as client:
            created = await client.post("/api/sessions")
            session_id = created.json()["session"]["id"]
            async with test.websocket(f"/api/sessions/{session_id}/live") as live:
                hello = await live.receive_json()
                posted = await client.post(
                    f"/api/sessions/{session_id}/messages",
                    json={"text": "what zone?", "timeZone": "Asia/Tokyo"},
                )
                first = await live.receive_json()
            agent, _ = await test.host.resume(session_id)
            await settled(agent)
            history = await client.get(f"/api/sessions/{session_id}/events")

    assert created.status_code == 201 and posted.status_code in (200, 202)
    assert hello["kind"] == "hello"
    assert first["kind"] == "event" and first["event"]["type"] == "message/user"
    results = [e for e in history.json()["events"] if e["type"] == "tool/result"]
    assert results[0]["data"]["value"] == "Asia/Tokyo"


async def test_a_websocket_without_the_token_is_refused(site: FakeSite) -> None:
    site.plugin("recorder", "Recorder")
    async with plugin_host("recorder") as test:
        with pytest.raises(WebSocketClosed) as refused:
            async with test.websocket("/api/live", token="wrong-" + TEST_TOKEN):
                pass

    assert refused.value.code == 1008 and "access token" in refused.value.reason


async def test_strict_mode_fails_the_test_with_the_traceback_of_a_tool_that_raised(
    site: FakeSite,
) -> None:
    site.plugin("tool-zone", "ZoneTools")
    model = FakeModel([FakeModel.tool_call("broken_now"), "sorry"])

    with pytest.raises(StrictModeError) as failed:
        async with plugin_host("tool-zone", model=model) as test:
            agent = await test.host.create_session()
            agent.submit("break it")
            await settled(agent)

    text = str(failed.value)
    assert text.startswith("1 failure contained by the host (strict mode; ")
    assert "tool 'broken_now' of plugin 'tool-zone' (dsh-tool-zone 1.0) failed" in text
    assert "Traceback" in text and "RuntimeError: secret detail" in text


async def test_check_fails_early_and_strict_false_lets_failures_be(site: FakeSite) -> None:
    site.plugin("tool-zone", "ZoneTools")
    model = FakeModel([FakeModel.tool_call("broken_now"), "sorry"] * 2)
    async with plugin_host("tool-zone", model=model) as test:
        agent = await test.host.create_session()
        agent.submit("break it")
        await settled(agent)
        with pytest.raises(StrictModeError):
            test.check()
        test.check()  # reported once

    async with plugin_host("tool-zone", model=model, strict=False) as lax:
        agent = await lax.host.create_session()
        agent.submit("break it")
        await settled(agent)
        lax.check()
