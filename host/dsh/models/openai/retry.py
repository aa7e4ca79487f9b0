"""When and how long to wait before asking the model server again.

Retried: HTTP 408, 409, 429 and every 5xx, and transport failures (refused or
dropped connections, timeouts) — but only while nothing of the reply was
passed on yet. Everything else is final at once.

The wait before retry `n` (0-based) is "full jitter": a uniform draw from
`[0, min(max_delay, base_delay * 2**n))`, so many clients that failed together
do not come back together. A `Retry-After` (seconds or an HTTP date) or
`retry-after-ms` header replaces the draw; a server that asks for more than
`retry_after_cap` seconds is not retried at all (waiting less than it asked
would only fail again, and waiting longer holds the turn for minutes).
"""

from __future__ import annotations

import email.utils
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from ...base.backoff import Backoff

__all__ = ["RetryPolicy", "is_retryable_status", "retry_after_seconds"]


def is_retryable_status(status: int) -> bool:
    """Whether an HTTP status may succeed when asked again."""
    return status in (408, 409, 429) or status >= 500


def retry_after_seconds(headers: Mapping[str, str], now_ms: int) -> float | None:
    """How long the server asked us to wait, or None if it did not say (or said nonsense).

    `headers` must look names up case-insensitively (as `httpx.Headers` does);
    `now_ms` is the wall clock, for HTTP dates.
    """
    milliseconds = _number(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now_ms / 1000)


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Backoff parameters (seconds). Retry counts live in `OpenAIConfig.max_retries`."""

    base_delay: float = 0.5
    max_delay: float = 8.0
    retry_after_cap: float = 60.0

    def delay(self, retry: int, rng: random.Random, retry_after: float | None) -> float | None:
        """Seconds to wait before retry number `retry` (0-based), or None to give up now."""
        if retry_after is not None:
            return retry_after if retry_after <= self.retry_after_cap else None
        return Backoff(self.base_delay, self.max_delay, jitter=True).delay(retry, rng)
