"""Metrics: one Prometheus registry per Host, and scoped registration into it.

`GET /metrics` (DESIGN §14.3) renders a Host's `Metrics`. Its parts register
what they measure there, and so do plugins (`PluginContext.metrics`), each
with the `Scope` that owns the metric: closing the scope unregisters it, so
an unloaded plugin's metrics leave the page and a plugin loaded again may
register the same names. Every registration is scoped; nothing registers
into prometheus_client's process-wide default registry, so two Hosts in one
process (tests, a bench) never share a count.

Names are `dsh_` and snake case; a counter's name ends in `_total` (as the
exposition shows it). Labels must take a bounded set of values: a route
template, never an id. A name registered twice is an error that names it.

A gauge may be read when scraped (`read=`): the live Sessions are counted
where they are kept, not mirrored into a number that could drift.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from .scope import Scope

__all__ = ["CONTENT_TYPE", "Counter", "Gauge", "Histogram", "Metrics"]

#: The media type of the exposition `Metrics.render` returns (Prometheus text 0.0.4).
CONTENT_TYPE = CONTENT_TYPE_LATEST

_NAME = re.compile(r"dsh_[a-z][a-z0-9_]*")
_LABEL = re.compile(r"[a-z][a-z0-9_]*")
_M = TypeVar("_M", bound=Collector)


class Metrics:
    """One Host's metrics (see the module docstring)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)

    def counter(
        self, name: str, documentation: str, labels: Sequence[str] = (), *, scope: Scope
    ) -> Counter:
        """A counter named `name` (ending in `_total`), unregistered when `scope` closes."""
        if not name.endswith("_total"):
            raise ValueError(f"metric {name!r}: a counter's name ends in _total")
        base = name.removesuffix("_total")
        return self._register(
            Counter(base, documentation, _labels(name, labels), registry=None), name, scope
        )

    def histogram(
        self,
        name: str,
        documentation: str,
        buckets: Sequence[float],
        labels: Sequence[str] = (),
        *,
        scope: Scope,
    ) -> Histogram:
        """A histogram with upper bounds `buckets` (increasing, in the unit the name says)."""
        if not buckets or list(buckets) != sorted(set(buckets)):
            raise ValueError(f"metric {name!r}: buckets must be increasing, not {buckets!r}")
        return self._register(
            Histogram(name, documentation, _labels(name, labels), buckets=buckets, registry=None),
            name,
            scope,
        )

    def gauge(
        self,
        name: str,
        documentation: str,
        *,
        scope: Scope,
        read: Callable[[], float] | None = None,
    ) -> Gauge:
        """A gauge; with `read`, its value is `read()` at every scrape."""
        gauge = Gauge(name, documentation, registry=None)
        if read is not None:
            gauge.set_function(read)
        return self._register(gauge, name, scope)

    def render(self) -> bytes:
        """The exposition of every registered metric (media type `CONTENT_TYPE`)."""
        return generate_latest(self.registry)

    def counted(
        self, name: str, documentation: str, read: Callable[[], float], *, scope: Scope
    ) -> None:
        """A counter kept elsewhere (a part's own running count): `read()` at every scrape."""
        if not name.endswith("_total"):
            raise ValueError(f"metric {name!r}: a counter's name ends in _total")
        self._register(_ReadCounter(name.removesuffix("_total"), documentation, read), name, scope)

    def _register(self, metric: _M, name: str, scope: Scope) -> _M:
        if _NAME.fullmatch(name) is None:
            raise ValueError(f"metric {name!r}: a dsh metric's name is dsh_ and snake case")
        try:
            self.registry.register(metric)
        except ValueError:
            raise ValueError(f"metric {name!r} is already registered") from None
        try:
            scope.add(lambda: self.registry.unregister(metric))
        except BaseException:
            self.registry.unregister(metric)
            raise
        return metric


class _ReadCounter(Collector):
    """A counter whose value is read when scraped."""

    def __init__(self, name: str, documentation: str, read: Callable[[], float]) -> None:
        self._name, self._documentation, self._read = name, documentation, read

    def describe(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(self._name, self._documentation)

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(self._name, self._documentation, value=self._read())


def _labels(name: str, labels: Sequence[str]) -> tuple[str, ...]:
    for label in labels:
        if _LABEL.fullmatch(label) is None:
            raise ValueError(f"metric {name!r}: label {label!r} is not snake case")
    return tuple(labels)
