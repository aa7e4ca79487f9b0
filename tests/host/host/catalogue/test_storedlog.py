"""`StoredLog`: a cold Session's log read ranged, type-filtered and remembered, off the loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
import pytest

from dsh.host.catalogue import StoredLog
from dsh.persistence import MemoryBackend
from dsh.session.event import SessionEvent
from dsh.session.header import SessionHeader
from dsh.session.log import SessionLog
from dsh.testing import FaultyBackend
from tests.host.persistence.contract import header

pytestmark = pytest.mark.anyio
T = TypeVar("T")

TYPES = ["a/x", "b/y", "b/y", "c/z"]


def mixed(count: int) -> list[SessionEvent]:
    return [
        SessionEvent(seq=seq, type=TYPES[seq % len(TYPES)], time=seq, data={"n": seq})
        for seq in range(count)
    ]


class Recording(FaultyBackend):
    """Records the range and filter of every read."""

    def __init__(self, inner: MemoryBackend) -> None:
        super().__init__(inner)
        self.ranges: list[tuple[int, int | None, tuple[str, ...] | None]] = []

    async def read(
        self, session_id: str, start: int = 0, stop: int | None = None, *, types: Any = None
    ) -> Any:
        self.ranges.append((start, stop, None if types is None else tuple(types)))
        return await super().read(session_id, start, stop, types=types)


async def stored(count: int, **changes: Any) -> tuple[Recording, StoredLog]:
    inner = MemoryBackend()
    await inner.initialize(header(**changes), mixed(count))
    backend = Recording(inner)
    found = await inner.header("s1")
    assert found is not None
    return backend, StoredLog(backend, found, count)


async def in_thread(func: Callable[[], T]) -> T:
    return await anyio.to_thread.run_sync(func)


async def test_it_is_a_session_log_that_knows_its_header_and_length_without_reading() -> None:
    backend, log = await stored(10, seedLength=3)
    assert isinstance(log, SessionLog)
    assert (log.id, len(log), log.fold_start) == ("s1", 10, 3)
    assert isinstance(log.header, SessionHeader)
    assert backend.ranges == []


async def test_reading_on_the_event_loop_is_refused() -> None:
    _, log = await stored(10)
    with pytest.raises(RuntimeError, match="worker thread"):
        log.event(3)
    with pytest.raises(RuntimeError, match="worker thread"):
        list(log.scan())


async def test_event_reads_a_small_window_once() -> None:
    backend, log = await stored(1_000)
    assert await in_thread(lambda: log.event(500)) == mixed(1_000)[500]
    assert await in_thread(lambda: [log.event(seq).seq for seq in (490, 510, 500)]) == [
        490,
        510,
        500,
    ]
    assert backend.ranges == [(468, 532, None)]
    assert log.reads == 1
    with pytest.raises(IndexError):
        log.event(1_000)
    with pytest.raises(IndexError):
        log.event(-1)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("types", [None, {"b/y"}, {"a/x", "c/z"}, set()])
@pytest.mark.parametrize(("start", "stop"), [(0, None), (5, 17), (990, 2_000), (-3, 4), (8, 3)])
async def test_scan_is_the_slice_a_session_would_give(
    reverse: bool, types: set[str] | None, start: int, stop: int | None
) -> None:
    _, log = await stored(1_000)
    events = mixed(1_000)
    end = len(events) if stop is None else min(stop, len(events))
    expected = [
        event
        for event in events[max(start, 0) : max(end, 0)]
        if types is None or event.type in types
    ]
    if reverse:
        expected.reverse()
    found = await in_thread(lambda: list(log.scan(start, stop, types=types, reverse=reverse)))
    assert found == expected


async def test_a_backward_scan_that_stops_early_reads_only_the_first_span() -> None:
    backend, log = await stored(100_000)

    def first_of_type() -> SessionEvent:
        return next(log.scan(0, 90_000, types={"c/z"}, reverse=True))

    assert (await in_thread(first_of_type)).seq == 89_999
    assert backend.ranges == [(89_744, 90_000, ("c/z",))]


async def test_a_whole_fold_reads_in_few_growing_spans() -> None:
    backend, log = await stored(100_000)
    found = await in_thread(lambda: sum(1 for _ in log.scan(types={"a/x"})))
    assert found == 25_000
    assert len(backend.ranges) <= 8
    assert [span[1] - span[0] for span in backend.ranges[:3]] == [256, 1_024, 4_096]


async def test_what_was_read_or_primed_is_not_read_again() -> None:
    backend, log = await stored(2_000)
    page = mixed(2_000)[1_500:1_600]
    log.prime(page, 1_500, 1_600)

    def walk() -> list[int]:
        seqs = [event.seq for event in log.scan(1_520, 1_580)]
        seqs += [event.seq for event in log.scan(1_500, 1_590, types={"b/y"}, reverse=True)]
        return seqs

    assert len(await in_thread(walk)) == 60 + 45
    assert backend.ranges == []
    # A wider filtered range reads only what the primed page does not cover.
    assert len(await in_thread(lambda: list(log.scan(1_400, 1_700, types={"a/x"})))) == 75
    assert backend.ranges == [(1_400, 1_500, ("a/x",)), (1_600, 1_700, ("a/x",))]
    # A narrower filter is covered by a wider one it already read.
    backend.ranges.clear()
    assert await in_thread(lambda: [e.seq for e in log.scan(1_400, 1_420, types={"a/x"})]) == [
        1_400,
        1_404,
        1_408,
        1_412,
        1_416,
    ]
    assert backend.ranges == []


async def test_a_storage_failure_reaches_the_reader() -> None:
    backend, log = await stored(100)
    backend.fail("read")
    with pytest.raises(Exception, match="injected fault"):
        await in_thread(lambda: log.event(5))
