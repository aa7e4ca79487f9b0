"""`Metrics`: one registry per Host, every registration scoped, names checked."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from dsh.base.metrics import Metrics
from dsh.base.scope import Scope

pytestmark = pytest.mark.anyio


def names(metrics: Metrics) -> set[str]:
    """The families on the page, without prometheus_client's `_created` companions."""
    families = text_string_to_metric_families(metrics.render().decode())
    return {family.name for family in families if not family.name.endswith("_created")}


async def test_a_scope_closing_takes_its_metrics_off_and_the_name_may_come_back() -> None:
    metrics = Metrics()
    plugin = Scope("plugin")
    counter = metrics.counter("dsh_things_total", "Things.", ("kind",), scope=plugin)
    counter.labels("a").inc(3)
    metrics.gauge("dsh_level", "A level.", read=lambda: 7, scope=plugin)
    metrics.counted("dsh_read_total", "Counted elsewhere.", lambda: 5, scope=plugin)
    histogram = metrics.histogram("dsh_wait_seconds", "Waits.", (0.1, 1.0), scope=plugin)
    histogram.observe(0.5)
    text = metrics.render().decode()
    assert 'dsh_things_total{kind="a"} 3.0' in text
    assert "dsh_level 7.0" in text and "dsh_read_total 5.0" in text
    assert 'dsh_wait_seconds_bucket{le="1.0"} 1.0' in text
    assert "# HELP dsh_things_total Things." in text
    await plugin.aclose()
    assert names(metrics) == set()
    again = Scope("plugin, loaded again")
    metrics.counter("dsh_things_total", "Things.", scope=again).inc()
    assert names(metrics) == {"dsh_things"}


def test_two_registries_never_share_a_count() -> None:
    first, second = Metrics(), Metrics()
    first.counter("dsh_things_total", "Things.", scope=Scope()).inc()
    second.counter("dsh_things_total", "Things.", scope=Scope())
    assert "dsh_things_total 1.0" in first.render().decode()
    assert "dsh_things_total 0.0" in second.render().decode()


@pytest.mark.parametrize(
    ("register", "message"),
    [
        (lambda m, s: m.counter("dsh_things", "x", scope=s), "ends in _total"),
        (lambda m, s: m.counted("dsh_things", "x", lambda: 1, scope=s), "ends in _total"),
        (lambda m, s: m.counter("things_total", "x", scope=s), "dsh_ and snake case"),
        (lambda m, s: m.gauge("dsh_Level", "x", scope=s), "dsh_ and snake case"),
        (lambda m, s: m.counter("dsh_x_total", "x", ("Kind",), scope=s), "not snake case"),
        (lambda m, s: m.histogram("dsh_w", "x", (1.0, 0.5), scope=s), "increasing"),
        (lambda m, s: m.histogram("dsh_w", "x", (), scope=s), "increasing"),
    ],
)
def test_a_bad_registration_names_the_metric_and_the_rule(register: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        register(Metrics(), Scope())  # type: ignore[operator]


async def test_a_name_registered_twice_is_refused_and_a_closed_scope_registers_nothing() -> None:
    metrics = Metrics()
    metrics.gauge("dsh_level", "A level.", scope=Scope())
    with pytest.raises(ValueError, match="'dsh_level' is already registered"):
        metrics.gauge("dsh_level", "Again.", scope=Scope())
    closed = Scope()
    await closed.aclose()
    with pytest.raises(Exception, match="closed"):
        metrics.gauge("dsh_other", "Too late.", scope=closed)
    assert names(metrics) == {"dsh_level"}
