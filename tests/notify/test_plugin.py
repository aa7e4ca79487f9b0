"""`NotifyPlugin` in a real test Host: channels checked at start, alerts recorded, health, seams."""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from dsh_notify.config import NotifyConfig
from dsh_notify.outbox import JsonlOutbox, MemoryOutbox
from dsh_notify.plugin import NotifyPlugin
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from dsh import (
    Alert,
    ClientModule,
    PluginContext,
    PluginLoadError,
    Scope,
    StorageError,
    StorageLocation,
)
from dsh.testing import FakeClock, load_plugin, plugin_host, running_host
from tests.support.deadlines import until

from .receivers import webhook
from .support import ScriptedChannel

pytestmark = pytest.mark.anyio


def alert(seq: int = 1, session_id: str = "s1") -> Alert:
    return Alert(session_id, seq, f"reminder {seq}", "due now", f"tag-{seq}", 1)


async def test_an_alert_reaches_a_webhook_and_health_says_so() -> None:
    with webhook() as hook:
        async with plugin_host(NotifyPlugin, config={"urls": [hook.url]}) as test:
            plugin = test.plugin
            assert isinstance(plugin, NotifyPlugin)
            await plugin.recorder(  # what the Host's attention worker does with new alerts
                [alert(1)]
            )
            await until(lambda: len(hook.received) == 1, "the webhook")
            await until(lambda: plugin.outbox.counts.pending == 0, "the delivery recorded done")
            async with test.client() as client:
                health = (await client.get("/api/health")).json()
            assert health["notify"] == {"pending": 0, "failed": 0, "failing": {}}
            async with test.client() as client:
                metrics = (await client.get("/metrics")).text
            assert (
                'dsh_notify_deliveries_total{channel="apprise",outcome="accepted"} 1.0' in metrics
            )
    assert hook.received[0]["title"] == "reminder 1"


async def test_the_host_hands_its_alerts_to_the_plugin_before_recording_them() -> None:
    async with running_host() as host:
        plugin, _ = await load_plugin(host, NotifyPlugin, name="notify")
        channel = ScriptedChannel(hold=anyio.Event())
        plugin.sender.add(channel)
        await host.attention._hand_over([alert(1), alert(2)])
        assert plugin.outbox.counts.pending == 2
        health = plugin.dsh_health()
        assert health["notify"]["pending"] == 2
        channel.hold.set()  # type: ignore[union-attr]
        await until(lambda: plugin.outbox.counts.pending == 0, "both sent")


async def test_a_bad_url_stops_the_plugin_from_loading_naming_the_key() -> None:
    async with running_host() as host:
        with pytest.raises(PluginLoadError, match=r"plugins\.notify\.urls\[0\]"):
            await load_plugin(host, NotifyPlugin, name="notify", config={"urls": ["x${NOPE_1}"]})


def context(
    config: NotifyConfig | None, storage: StorageLocation, group: Any, clock: FakeClock
) -> PluginContext[NotifyConfig | None]:
    from dsh import LiveSessions

    return PluginContext(
        name="notify",
        config=config,
        scope=Scope("plugin notify"),
        live=LiveSessions(clock),
        clock=clock,
        group=group,
        storage=storage,
    )


async def test_without_a_config_it_uses_the_defaults_and_keeps_the_outbox_beside_the_logs(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    blocked = tmp_path / "file"
    blocked.write_text("")  # not a directory: the outbox cannot open until it is one
    async with anyio.create_task_group() as group:
        ctx = context(None, StorageLocation("jsonl", data_dir=blocked), group, clock)
        plugin = NotifyPlugin(ctx)
        assert isinstance(plugin.outbox, JsonlOutbox)
        assert plugin.config == NotifyConfig()
        assert plugin.dsh_web_routes() == [] and plugin.dsh_client_modules() == []
        await until(lambda: clock.sleeps == [1.0], "a retry of the start-up")
        blocked.unlink()
        blocked.mkdir()
        clock.advance(1.0)
        await until(plugin.recorder.ready.is_set, "the start-up")
        await plugin.recorder([alert(1)])  # no channel target: nothing recorded
        assert plugin.outbox.counts.pending == 0
        await ctx.scope.aclose()


class FakeWebPush:
    """What notify-webpush's `WebPush` offers the plugin (the seam), for this branch's tests."""

    opened = 0

    def __init__(self, context: PluginContext[NotifyConfig]) -> None:
        self.context = context
        self.closed = False
        self._channel = ScriptedChannel(name="webpush", target_ids=["sub-1"])

    async def open(self) -> None:
        FakeWebPush.opened += 1

    @property
    def channel(self) -> ScriptedChannel:
        return self._channel

    def routes(self) -> list[Route]:
        return [Route("/api/push/key", lambda request: PlainTextResponse("key"))]

    def client_modules(self) -> list[ClientModule]:
        return [ClientModule(Path(__file__))]

    async def aclose(self) -> None:
        self.closed = True


async def test_web_push_is_opened_before_sending_and_serves_its_routes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("dsh_notify.webpush")
    module.WebPush = FakeWebPush  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "dsh_notify.webpush", module)
    async with plugin_host(NotifyPlugin, config={"web_push": True}) as test:
        plugin = test.plugin
        assert isinstance(plugin, NotifyPlugin) and isinstance(plugin.web_push, FakeWebPush)
        await until(plugin.recorder.ready.is_set, "the start-up")
        assert FakeWebPush.opened == 1
        assert [r.path for r in plugin.dsh_web_routes()] == ["/api/push/key"]  # type: ignore[attr-defined]
        assert plugin.dsh_client_modules() == [ClientModule(Path(__file__))]
        await plugin.recorder([alert(5)])
        await until(lambda: plugin.web_push.channel.sent == [("sub-1", 5)], "the push")  # type: ignore[union-attr]
        async with test.client() as client:
            assert (await client.get("/api/push/key")).text == "key"
        web_push = plugin.web_push
    assert web_push.closed


async def test_the_sink_waits_for_the_start_up_then_refuses_so_the_host_retries(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    blocked = tmp_path / "file"
    blocked.write_text("")  # the outbox cannot open: the start-up waits on the fake clock
    async with anyio.create_task_group() as group:
        ctx = context(NotifyConfig(), StorageLocation("jsonl", data_dir=blocked), group, clock)
        plugin = NotifyPlugin(ctx)
        plugin.recorder.ready_timeout = 0.01
        with pytest.raises(StorageError, match="is not open yet"):
            await plugin.recorder([alert(1)])
        await ctx.scope.aclose()


async def test_on_the_memory_store_the_outbox_is_in_memory() -> None:
    async with anyio.create_task_group() as group:
        ctx = context(NotifyConfig(), StorageLocation(), group, FakeClock())
        assert isinstance(NotifyPlugin(ctx).outbox, MemoryOutbox)
        await ctx.scope.aclose()


def test_the_plugin_names_what_it_needs_of_web_push() -> None:
    needed: Sequence[str] = ("open", "channel", "routes", "client_modules", "aclose")
    assert all(hasattr(FakeWebPush, name) for name in needed)
