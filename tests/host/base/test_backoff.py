from __future__ import annotations

import random

import pytest

from dsh.base.backoff import Backoff


def test_each_wait_doubles_from_the_first_up_to_the_cap() -> None:
    backoff = Backoff(first=0.5, cap=10.0)
    assert [backoff.delay(n) for n in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert backoff.delay(10_000) == 10.0  # no overflow however long it failed
    assert backoff.delay(-1) == 0.5


def test_with_jitter_a_wait_is_a_random_fraction_of_the_same_bound() -> None:
    backoff = Backoff(first=1.0, cap=4.0, jitter=True)
    waits = [backoff.delay(n, random.Random(7)) for n in range(4)]
    bounds = [1.0, 2.0, 4.0, 4.0]
    assert all(0 <= wait <= bound for wait, bound in zip(waits, bounds, strict=True))
    assert waits == [backoff.delay(n, random.Random(7)) for n in range(4)]  # the rng decides
    assert 0 <= backoff.delay(3) <= 4.0


@pytest.mark.parametrize(("first", "cap", "factor"), [(0, 1, 2), (2, 1, 2), (1, 2, 0.5)])
def test_a_backoff_that_cannot_back_off_is_refused(first: float, cap: float, factor: float) -> None:
    with pytest.raises(ValueError, match="0 < first <= cap and factor >= 1"):
        Backoff(first=first, cap=cap, factor=factor)
