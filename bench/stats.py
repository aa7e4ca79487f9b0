"""Summaries of samples: every figure is reported with its spread, never alone."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

__all__ = ["percentile", "summary"]


def percentile(samples: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0..100) by the nearest-rank method; NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summary(samples: Sequence[float], digits: int = 3) -> dict[str, float | int | None]:
    """`{"n", "min", "median", "p99", "max"}` of `samples`, rounded to `digits`.

    With no samples every figure is None (JSON has no NaN).
    """
    if not samples:
        return {"n": 0, "min": None, "median": None, "p99": None, "max": None}
    return {
        "n": len(samples),
        "min": round(min(samples), digits),
        "median": round(statistics.median(samples), digits),
        "p99": round(percentile(samples, 99), digits),
        "max": round(max(samples), digits),
    }
