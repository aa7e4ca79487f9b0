"""When a delivery is tried again: exponential backoff with jitter, about an hour in all.

The n-th retry waits `BASE_SECONDS * 2**(n-1)`, at most `CAP_SECONDS`,
times a random factor in [0.8, 1.2] (so many deliveries that failed together
do not all come back together), and never less than what the service asked
for (`Retry.after`, at most `MAX_AFTER_SECONDS`). With the default
`max_attempts = 8` the seven waits add up to 30 s + 1 + 2 + 4 + 8 + 16 + 30 min
≈ 62 minutes.

`storage_delay(n)` is how long to wait after the n-th storage failure in a
row (opening or writing the outbox): 1 s, doubling, at most a minute.
"""

from __future__ import annotations

import random

__all__ = ["BASE_SECONDS", "CAP_SECONDS", "MAX_AFTER_SECONDS", "retry_delay", "storage_delay"]

BASE_SECONDS = 30.0
CAP_SECONDS = 1800.0
MAX_AFTER_SECONDS = 6 * 3600.0
JITTER = 0.2


def retry_delay(retry: int, after: float | None = None, *, rng: random.Random) -> float:
    """Seconds to wait before retry number `retry` (1 = the first retry)."""
    base = min(BASE_SECONDS * 2.0 ** (retry - 1), CAP_SECONDS)
    delay = base * rng.uniform(1 - JITTER, 1 + JITTER)
    if after is not None:
        delay = max(delay, min(after, MAX_AFTER_SECONDS))
    return delay


def storage_delay(trouble: int) -> float:
    """Seconds to wait after the `trouble`-th storage failure in a row."""
    return min(2.0 ** (trouble - 1), 60.0)
