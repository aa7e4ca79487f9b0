"""A `GET /metrics` page as `{"name{label=value,...}": value}`, by prometheus_client."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["samples"]


def samples(text: str) -> dict[str, float]:
    """Every sample of the page, keyed by its name and its sorted labels."""
    found: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{key}={value}" for key, value in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}"] = sample.value
    return found
