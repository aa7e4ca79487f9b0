"""A scripted day on the metrics page with dsh-notify: a reminder delivered, a channel that
fails and then takes it, a model call that fails — scraped by prometheus_client's parser."""

from __future__ import annotations

import pytest
from dsh_notify.plugin import NotifyPlugin

from dsh.testing import FakeClock, FakeModel, load_plugin, plugin_host, settled
from dsh_tool_schedule import SchedulePlugin
from tests.schedule.conftest import START_MS, dispatches
from tests.support.deadlines import until
from tests.support.metrics import samples

from .receivers import webhook

pytestmark = pytest.mark.anyio


async def test_a_scripted_day_counts_a_failing_channel_on_the_metrics_page() -> None:
    clock = FakeClock(START_MS)
    model = FakeModel(
        [
            FakeModel.tool_call("schedule_create", {"prompt": "stretch", "after_seconds": 60}),
            "Set.",
            "Time to stretch!",  # the reminder's turn; then the script is used up: a failure
        ]
    )
    with webhook() as hook:
        hook.down = 1  # the first send fails (500): retried, then taken
        async with (
            plugin_host(SchedulePlugin, model=model, clock=clock) as test,
            test.client() as client,
        ):
            notify, _ = await load_plugin(
                test.host, NotifyPlugin, name="notify", config={"urls": [hook.url]}
            )
            session_id = (await client.post("/api/sessions")).json()["session"]["id"]
            path = f"/api/sessions/{session_id}/messages"
            assert (await client.post(path, json={"text": "remind me"})).status_code == 202
            agent = test.host.agent(session_id)
            assert agent is not None
            await settled(agent)
            clock.advance(60)
            await until(lambda: len(dispatches(agent.session)) == 1, "the delivery")
            await settled(agent)
            await until(lambda: notify.outbox.counts.pending == 1, "the alert in the outbox")
            await until(lambda: notify.sender.failing != {}, "the first send to fail")
            failing = (await client.get("/api/health")).json()["notify"]["failing"]
            assert list(failing) == ["apprise"]
            clock.advance(3600)  # past the retry's back-off
            await until(lambda: len(hook.received) == 1, "the webhook to take it")
            await until(lambda: notify.outbox.counts.pending == 0, "the delivery done")
            assert (await client.post(path, json={"text": "thanks"})).status_code == 202
            await settled(agent)
            response = await client.get("/metrics")
    assert hook.received[0]["title"] == "stretch"
    found = samples(response.text)
    assert found["dsh_reminders_dispatched_total{}"] == 1
    assert found["dsh_notify_deliveries_total{channel=apprise,outcome=retried}"] == 1
    assert found["dsh_notify_deliveries_total{channel=apprise,outcome=accepted}"] == 1
    assert found["dsh_model_requests_total{outcome=error}"] == 1
    assert found["dsh_sessions_live{}"] == 1
