from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from dsh.web.connections.ratelog import LogSummary, QuietRepeats


class Timers:
    """A fake `call_later`: the test fires timers by hand."""

    def __init__(self) -> None:
        self.armed: list[tuple[float, Callable[[], None], Timer]] = []

    def __call__(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = Timer()
        self.armed.append((delay, callback, timer))
        return timer

    def fire(self) -> None:
        _, callback, timer = self.armed.pop(0)
        assert not timer.cancelled
        callback()


class Timer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


@pytest.fixture
def logger() -> logging.Logger:
    return logging.getLogger("tests.ratelog")


def messages(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "tests.ratelog"]


def test_a_burst_is_one_line_now_and_one_line_with_the_count_after_the_interval(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    timers = Timers()
    summary = LogSummary(logger, "connections", timers, interval=10, describe=lambda: "3 held")
    with caplog.at_level(logging.INFO, logger="tests.ratelog"):
        for _ in range(10_000):
            summary.note("refused")
        summary.note("evicted")
        assert messages(caplog) == [
            (
                logging.WARNING,
                "connections: 1 refused; repeats are summarized every 10 s (3 held)",
            )
        ]
        assert [delay for delay, _, _ in timers.armed] == [10]
        timers.fire()
        timers.fire()  # a quiet interval: nothing to write, and no timer re-armed
    assert messages(caplog)[1:] == [
        (logging.WARNING, "connections: 1 evicted, 9999 refused in the last 10 s (3 held)")
    ]
    assert timers.armed == [] and summary.lines == 2


def test_after_a_quiet_interval_the_next_event_is_written_at_once(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    timers = Timers()
    summary = LogSummary(logger, "c", timers, interval=5)
    with caplog.at_level(logging.INFO, logger="tests.ratelog"):
        summary.note("refused")
        timers.fire()
        summary.note("refused")
    assert [m for _, m in messages(caplog)] == [
        "c: 1 refused; repeats are summarized every 5 s",
        "c: 1 refused; repeats are summarized every 5 s",
    ]


def test_lines_about_quiet_events_only_are_info(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    timers = Timers()
    summary = LogSummary(logger, "c", timers, quiet=("head_timeout",))
    with caplog.at_level(logging.INFO, logger="tests.ratelog"):
        summary.note("head_timeout")
        summary.note("head_timeout")
        summary.note("refused")
        timers.fire()
    assert [level for level, _ in messages(caplog)] == [logging.INFO, logging.WARNING]


def test_close_writes_what_is_pending_and_stops_the_timer(
    logger: logging.Logger, caplog: pytest.LogCaptureFixture
) -> None:
    timers = Timers()
    summary = LogSummary(logger, "c", timers, interval=10)
    with caplog.at_level(logging.INFO, logger="tests.ratelog"):
        summary.note("refused")
        summary.note("refused")
        summary.close()
        summary.close()
    assert [m for _, m in messages(caplog)][-1] == "c: 1 refused in the last 10 s"
    assert timers.armed[0][2].cancelled and summary.lines == 2


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(msg: object, *args: object) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.error", logging.WARNING, __file__, 1, msg, args, None)


def test_quiet_repeats_lets_one_line_per_template_through_per_interval() -> None:
    clock = Clock()
    quiet = QuietRepeats(["Invalid HTTP request received.", "%s - %d"], interval=10, clock=clock)
    passed = [quiet.filter(record("Invalid HTTP request received.")) for _ in range(5)]
    assert passed == [True, False, False, False, False]
    assert quiet.filter(record("%s - %d", "a", 401))
    assert not quiet.filter(record("%s - %d", "b", 403))
    assert quiet.dropped() == {"Invalid HTTP request received.": 4, "%s - %d": 1}
    clock.now = 10.0
    again = record("Invalid HTTP request received.")
    assert quiet.filter(again)
    assert again.getMessage() == "Invalid HTTP request received. [4 more like this were not logged]"
    assert quiet.dropped() == {"%s - %d": 1}
    clock.now = 25.0
    fresh = record("Invalid HTTP request received.")
    assert quiet.filter(fresh) and fresh.getMessage() == "Invalid HTTP request received."


def test_quiet_repeats_leaves_other_records_alone() -> None:
    quiet = QuietRepeats(["noisy"], clock=Clock())
    assert all(quiet.filter(record("something else")) for _ in range(3))
    assert all(quiet.filter(record(ValueError("not a template"))) for _ in range(3))
