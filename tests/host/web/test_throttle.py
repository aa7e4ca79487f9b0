"""Failed authentication per address: the count, the window, the bound, the summary lines."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from dsh.web.throttle import AuthThrottle, client_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Timers:
    """A fake `call_later`: timers fire when the test says so."""

    def __init__(self) -> None:
        self.pending: list[Callable[[], None]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> Timers:
        self.pending.append(callback)
        return self

    def cancel(self) -> None:
        self.pending.clear()

    def fire(self) -> None:
        due, self.pending = self.pending, []
        for callback in due:
            callback()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def timers() -> Timers:
    return Timers()


def throttle(clock: Clock, timers: Timers, **limits: float) -> AuthThrottle:
    return AuthThrottle(
        limit=int(limits.get("limit", 3)),
        window=limits.get("window", 60.0),
        capacity=int(limits.get("capacity", 100)),
        clock=clock,
        schedule=timers,
    )


def test_an_address_waits_after_limit_failures_until_its_window_ends(
    clock: Clock, timers: Timers
) -> None:
    guard = throttle(clock, timers)
    for _ in range(2):
        guard.failed("10.0.0.1")
        assert guard.retry_after("10.0.0.1") is None
    clock.now += 10.5
    guard.failed("10.0.0.1")

    assert guard.retry_after("10.0.0.1") == 50  # 60 s from the first failure, rounded up
    assert guard.retry_after("10.0.0.2") is None  # another address is not held back
    clock.now += 49.4
    assert guard.retry_after("10.0.0.1") == 1  # never 0 while it must wait
    clock.now += 0.1
    assert guard.retry_after("10.0.0.1") is None  # the window is over: a fresh start
    guard.failed("10.0.0.1")
    assert guard.retry_after("10.0.0.1") is None


def test_answered_429s_do_not_extend_the_wait(clock: Clock, timers: Timers) -> None:
    guard = throttle(clock, timers)
    for _ in range(3):
        guard.failed("10.0.0.1")
    for _ in range(100):
        assert guard.retry_after("10.0.0.1") is not None
    clock.now += 60
    assert guard.retry_after("10.0.0.1") is None


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("10.1.2.3", "10.1.2.3"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("::ffff:10.1.2.3", "10.1.2.3"),
        ("testclient", "testclient"),
        (None, "unknown"),
    ],
)
def test_an_address_counts_as_itself_or_its_ipv6_64(address: str | None, key: str) -> None:
    assert client_key(address) == key


def test_one_ipv6_network_shares_its_count(clock: Clock, timers: Timers) -> None:
    guard = throttle(clock, timers)
    for host in range(3):
        guard.failed(f"2001:db8:1:2::{host + 1}")
    assert guard.retry_after("2001:db8:1:2:ffff::9") is not None
    assert guard.retry_after("2001:db8:1:3::1") is None


def test_memory_is_bounded_by_evicting_the_oldest_window(clock: Clock, timers: Timers) -> None:
    guard = throttle(clock, timers, capacity=4)
    for _ in range(3):
        guard.failed("10.0.0.0")
    for host in range(1, 1000):
        clock.now += 0.01
        guard.failed(f"10.0.{host // 256}.{host % 256}")
        assert guard.tracked() <= 4
    assert guard.retry_after("10.0.0.0") is None  # evicted: its count is forgotten
    assert guard.tracked() == 4


def test_the_log_says_it_in_summaries(
    clock: Clock, timers: Timers, caplog: pytest.LogCaptureFixture
) -> None:
    guard = throttle(clock, timers)
    with caplog.at_level(logging.INFO, logger="dsh.web.throttle"):
        for _ in range(3):
            guard.failed("10.0.0.1")
        for _ in range(50):
            guard.retry_after("10.0.0.1")
        guard.failed("10.0.0.2")
        first = list(caplog.messages)
        timers.fire()
        guard.close()

    assert first == [
        "failed authentication: 1 refused (401); repeats are summarized every 10 s "
        "(no address throttled now)"
    ]
    assert caplog.messages[1:] == [
        "failed authentication: 1 address(es) throttled, 3 refused (401), 50 throttled (429) "
        "in the last 10 s (throttled now: 10.0.0.1)"
    ]
    assert all(record.levelno == logging.WARNING for record in caplog.records)


def test_a_summary_names_at_most_three_throttled_addresses(
    clock: Clock, timers: Timers, caplog: pytest.LogCaptureFixture
) -> None:
    guard = throttle(clock, timers, limit=1)
    with caplog.at_level(logging.INFO, logger="dsh.web.throttle"):
        for host in range(5):
            guard.failed(f"10.0.0.{host}")
        timers.fire()
    assert caplog.messages[-1].endswith("(throttled now: 10.0.0.0, 10.0.0.1, 10.0.0.2 and 2 more)")
