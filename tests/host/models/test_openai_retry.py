"""The retry policy: which statuses retry, backoff with full jitter, Retry-After."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import httpx
import pytest

from dsh.models.openai import RetryPolicy
from dsh.models.openai.retry import is_retryable_status, retry_after_seconds

NOW_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


class Highest(random.Random):
    def random(self) -> float:
        return 1.0


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        *[(status, True) for status in (408, 409, 429, 500, 503, 599)],
        *[(status, False) for status in (302, 400, 401, 403, 404, 422)],
    ],
)
def test_only_transient_statuses_are_retryable(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_backoff_ceilings_double_per_retry_up_to_the_maximum() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0)

    assert [policy.delay(n, Highest(), None) for n in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_backoff_is_a_full_jitter_draw_below_the_ceiling() -> None:
    policy = RetryPolicy()
    draws = random.Random(3)

    delay = policy.delay(2, random.Random(3), None)

    assert delay == draws.random() * 2.0
    assert 0 <= delay < 2.0


def test_a_retry_after_replaces_the_draw_and_one_beyond_the_cap_gives_up() -> None:
    policy = RetryPolicy(retry_after_cap=60)

    assert policy.delay(0, Highest(), 60.0) == 60.0
    assert policy.delay(0, Highest(), 0.0) == 0.0
    assert policy.delay(0, Highest(), 60.5) is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"Retry-After": "12"}, 12.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "Thu, 01 Jan 2026 00:00:42 GMT"}, 42.0),
        ({"retry-after": "Wed, 31 Dec 2025 23:59:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "x", "retry-after": "9"}, 9.0),
    ],
)
def test_retry_after_is_read_from_seconds_dates_and_milliseconds(
    headers: dict[str, str], expected: float | None
) -> None:
    assert datetime.fromtimestamp(NOW_MS / 1000, UTC).isoformat() == "2026-01-01T00:00:00+00:00"

    assert retry_after_seconds(httpx.Headers(headers), NOW_MS) == expected
