"""The schedule plugin's `/metrics`: durable dispatches, their lateness, what is overdue."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .conftest import Harness, dispatches, settle
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
