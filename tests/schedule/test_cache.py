from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from dsh.session.log import Session
from dsh_tool_schedule.cache import DEFAULT_SIZE, FoldCache
from dsh_tool_schedule.fold import ScheduleFold

from .conftest import START_MS
from .logs import create, create2, delete, dispatch, dispatch2, every, extend, session, user
from .test_presentation import ColdLog


@contextmanager
def folded() -> Iterator[list[int]]:
    """The seqs the fold reads while the block runs."""
    calls: list[int] = []
    real = ScheduleFold._apply

    def counting(self: ScheduleFold, seq: int, data: object) -> object:
        calls.append(seq)
        return real(self, seq, data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ScheduleFold, "_apply", counting)
        yield calls


def same(a: ScheduleFold, b: ScheduleFold) -> None:
    assert (a.reminders(), a.error, a.position) == (b.reminders(), b.error, b.position)
    if a.error is None:
        assert a.next_id() == b.next_id()


HOURLY = every(3600, first_ms=START_MS + 3_600_000)
BASE = session(create2(HOURLY), user(), create("rem-2"), dispatch("rem-2"))


def test_a_later_read_of_the_same_log_folds_only_what_was_appended() -> None:
    cache = FoldCache()
    with folded() as calls:
        first = cache.fold(ColdLog(BASE))
        assert calls == [0, 2, 3]
        grown = extend(BASE, dispatch2("rem-1", START_MS + 3_600_000, 0), user())
        again = cache.fold(ColdLog(grown))
        assert calls == [0, 2, 3, 4]  # one new event, not the whole log
        assert cache.fold(ColdLog(grown)) is again  # nothing new: the held fold itself
    assert cache.hits == 2
    same(first, ScheduleFold.of(BASE))
    same(again, ScheduleFold.of(grown))
    assert first.position == len(BASE)  # the fold handed out before is not advanced


def test_another_lifecycle_or_a_replaced_log_is_folded_afresh() -> None:
    cache = FoldCache()
    cache.fold(BASE)
    other = Session(
        Session.new("log", cwd="/elsewhere", created_at=START_MS).header,
        extend(BASE, user()).events,
    )
    replaced = session(create2(HOURLY), user(), create("rem-2"), delete("rem-2"), user())
    for log in (other, replaced):
        cache.fold(BASE)
        with folded() as calls:
            fold = cache.fold(log)
        assert calls[0] == 0
        same(fold, ScheduleFold.of(log))


def test_a_shorter_log_gets_a_fold_of_its_own_and_the_held_one_stays() -> None:
    cache = FoldCache()
    longer = extend(BASE, delete("rem-1"))
    cache.fold(longer)
    short = cache.fold(BASE, 2)
    assert short.position == 2 and [item.id for item in short.reminders()] == ["rem-1"]
    with folded() as calls:
        assert cache.fold(longer).position == len(longer)
    assert calls == []


def test_stop_bounds_the_fold_and_past_reuses_any_fold_past_the_seq() -> None:
    cache = FoldCache()
    assert cache.fold(BASE, 99).position == len(BASE)
    with folded() as calls:
        assert cache.past(BASE, 1).position == len(BASE)
    assert calls == []
    fresh = FoldCache()
    with folded() as calls:
        assert fresh.past(BASE, 0, 1).position == 1
        assert fresh.past(BASE, 2, 3).position == 3
    assert calls == [0, 2]


def test_a_fork_folds_from_its_seed_and_an_empty_log_folds_to_nothing() -> None:
    child = Session.fork(BASE.header, BASE.events, "child", at=len(BASE), created_at=START_MS)
    cache = FoldCache()
    fold = cache.fold(child, 0)
    assert fold.position == child.fold_start
    empty = session()
    assert cache.fold(empty).reminders() == []
    assert cache.fold(empty).position == 0
    assert cache.hits == 1


def test_seed_is_a_copy_to_advance_and_none_for_an_unknown_log() -> None:
    cache = FoldCache()
    assert cache.seed(BASE) is None
    held = cache.fold(BASE)
    seed = cache.seed(extend(BASE, delete("rem-1")))
    assert seed is not None and seed is not held
    seed.advance(extend(BASE, delete("rem-1")))
    assert seed.reminders() == [] and [item.id for item in held.reminders()] == ["rem-1"]


def test_the_cache_is_bounded_and_cleared_on_request() -> None:
    assert FoldCache().size == DEFAULT_SIZE
    with pytest.raises(ValueError, match="at least one"):
        FoldCache(0)
    cache = FoldCache(2)
    logs = [session(create("rem-1"), session_id=f"s{n}") for n in range(3)]
    for log in logs:
        cache.fold(log)
    cache.fold(logs[1])  # most recently used now
    assert len(cache) == 2
    cache.fold(logs[0])  # evicted: folded again, and s2 goes
    assert cache.hits == 1
    with folded() as calls:
        cache.fold(logs[1])
    assert calls == []
    cache.clear()
    assert len(cache) == 0


def test_the_ids_the_held_folds_remember_are_bounded_too() -> None:
    cache = FoldCache(max_ids=3)
    two = [session(create("rem-1"), create("rem-2"), session_id=f"s{n}") for n in range(2)]
    cache.fold(two[0])
    cache.fold(extend(two[0], create("rem-3")))  # replaces its own fold: 3 ids
    assert len(cache) == 1
    cache.fold(two[1])  # 5 ids: the older goes
    assert len(cache) == 1
    big = session(*[create(f"rem-{n}") for n in range(1, 6)], session_id="big")
    cache.fold(big)  # over the bound alone: still kept (the most recent)
    assert len(cache) == 1 and cache.seed(big) is not None
    cache.clear()
    cache.fold(two[0])
    cache.fold(two[1])
    assert len(cache) == 1
