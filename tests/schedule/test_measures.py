"""The schedule plugin's `/metrics`: durable dispatches, their lateness, what is overdue."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dsh.testing import FakeClock, FakeModel, plugin_host, settled
from dsh_tool_schedule import SchedulePlugin
from tests.support.deadlines import until
from tests.support.metrics import samples

from .conftest import START_MS, Harness, dispatches, settle
from .test_owner import follow

pytestmark = pytest.mark.anyio


def scraped(harness: Harness) -> dict[str, float]:
    text = harness.context.metrics.render().decode()
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = "".join(f"{{{key}={value}}}" for key, value in sorted(sample.labels.items()))
            found[sample.name + labels] = sample.value
    return found


async def test_a_durable_dispatch_is_counted_with_its_lateness(harness: Harness) -> None:
    agent = harness.open()
    await harness.value(agent, "schedule_create", prompt="stretch", after_seconds=10)
    await harness.value(agent, "schedule_create", prompt="drink", after_seconds=30)
    before = scraped(harness)
    assert before["dsh_reminders_dispatched_total"] == 0
    assert before["dsh_reminders_overdue"] == 0

    harness.clock.advance(10)  # due now; the owner has not run yet
    assert scraped(harness)["dsh_reminders_overdue"] == 1
    await follow(harness, lambda: len(dispatches(agent.session)) == 2)
    await settle()

    after = scraped(harness)
    assert after["dsh_reminders_dispatched_total"] == 2
    assert after["dsh_reminder_dispatch_lateness_seconds_count"] == 2
    assert after["dsh_reminder_dispatch_lateness_seconds_bucket{le=0.001}"] == 2  # on time
    assert after["dsh_reminders_overdue"] == 0


async def test_unloading_the_plugin_takes_its_metrics_off_the_page(harness: Harness) -> None:
    assert "dsh_reminders_overdue" in scraped(harness)
    await harness.plugin_scope.aclose()
    assert harness.context.metrics.render() == b""


async def test_a_scripted_day_is_counted_on_the_metrics_page() -> None:
    """Through `GET /metrics` of a running host: a reminder set and delivered, a model call
    that fails, the requests that did it — parsed by prometheus_client's own parser."""
    clock = FakeClock(START_MS)
    model = FakeModel(
        [
            FakeModel.tool_call("schedule_create", {"prompt": "stretch", "after_seconds": 60}),
            "Set.",
            "Time to stretch!",  # the reminder's turn
        ]  # then the script is used up: the next call fails with model_unavailable
    )
    async with (
        plugin_host(SchedulePlugin, model=model, clock=clock) as test,
        test.client() as client,
    ):
        session_id = (await client.post("/api/sessions")).json()["session"]["id"]
        path = f"/api/sessions/{session_id}/messages"
        assert (await client.post(path, json={"text": "remind me"})).status_code == 202
        agent = test.host.agent(session_id)
        assert agent is not None
        await settled(agent)
        clock.advance(60)
        await until(lambda: len(dispatches(agent.session)) == 1, "the delivery")
        await settled(agent)
        assert (await client.post(path, json={"text": "thanks"})).status_code == 202
        await settled(agent)
        response = await client.get("/metrics")
    assert response.status_code == 200
    found = samples(response.text)
    assert found["dsh_reminders_dispatched_total{}"] == 1
    assert found["dsh_reminder_dispatch_lateness_seconds_count{}"] == 1
    assert found["dsh_reminders_overdue{}"] == 0
    assert found["dsh_model_requests_total{outcome=ok}"] == 3
    assert found["dsh_model_requests_total{outcome=error}"] == 1
    assert found["dsh_sessions_live{}"] == 1
    route = "method=POST,route=/api/sessions/{session_id}/messages,status=202"
    assert found[f"dsh_http_requests_total{{{route}}}"] == 2
