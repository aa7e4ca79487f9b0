"""`WakeAhead`: the resume rate measured from this host's own resumes, and the extra
lead it gives a crowded second."""

from __future__ import annotations

import pytest

from dsh.wake.ahead import AHEAD_CAP, MARGIN, PRIOR_RESUME_SECONDS, WakeAhead


def test_before_any_resume_the_prior_stands_in() -> None:
    ahead = WakeAhead()
    assert ahead.measured == 0
    assert ahead.cost_seconds == PRIOR_RESUME_SECONDS
    assert ahead.rate == pytest.approx(1 / PRIOR_RESUME_SECONDS)
    assert ahead.cap == AHEAD_CAP


def test_a_lone_session_keeps_the_plain_lead_and_a_crowd_needs_one_cost_per_other() -> None:
    ahead = WakeAhead(prior_seconds=0.01, margin=1)
    assert ahead.extra_ms(0) == 0
    assert ahead.extra_ms(1) == 0
    assert ahead.extra_ms(2) == 10
    assert ahead.extra_ms(101) == 1_000


def test_the_cap_bounds_the_sessions_woken_ahead() -> None:
    ahead = WakeAhead(prior_seconds=0.01, cap=50, margin=1)
    assert ahead.extra_ms(51) == 500
    assert ahead.extra_ms(10_000) == 500


def test_a_crowd_is_planned_with_half_again_the_measured_cost() -> None:
    ahead = WakeAhead(prior_seconds=0.01)
    assert ahead.margin == MARGIN == 1.5
    assert ahead.extra_ms(1) == 0  # a lone Session still keeps the plain lead
    assert ahead.extra_ms(101) == 1_500
    assert WakeAhead(prior_seconds=0.01, margin=2).extra_ms(101) == 2_000


def test_each_resume_costs_its_time_shared_among_those_running_beside_it() -> None:
    ahead = WakeAhead(prior_seconds=1.0)
    ahead.observe(0.08, 8)  # eight at once, 80 ms each: 10 ms of the host's time each
    ahead.observe(0.03, 1)
    assert ahead.measured == 2
    assert ahead.cost_seconds == pytest.approx(0.02)
    assert ahead.rate == pytest.approx(50)


def test_only_the_recent_resumes_count() -> None:
    ahead = WakeAhead(samples=3)
    for seconds in (1.0, 1.0, 1.0, 0.1, 0.1, 0.1):
        ahead.observe(seconds, 1)
    assert ahead.measured == 3
    assert ahead.cost_seconds == pytest.approx(0.1)


def test_a_wall_clock_stepped_back_mid_resume_gives_no_sample() -> None:
    ahead = WakeAhead()
    ahead.observe(-0.5, 1)
    ahead.observe(0.5, 0)
    assert ahead.measured == 0


def test_a_replan_is_asked_for_only_when_the_rate_moved_by_more_than_a_quarter() -> None:
    ahead = WakeAhead(prior_seconds=0.01)
    assert ahead.replan() is False
    ahead.observe(0.012, 1)  # 20 % slower
    assert ahead.replan() is False
    ahead.observe(0.1, 1)  # mean 56 ms
    assert ahead.replan() is True
    assert ahead.replan() is False  # planned with it now


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cap": -1}, "cap must not be negative"),
        ({"prior_seconds": 0}, "prior_seconds must be positive"),
        ({"margin": 0.9}, "margin must be at least 1, not 0.9"),
        ({"margin": float("nan")}, "margin must be at least 1, not nan"),
    ],
)
def test_nonsense_settings_are_refused(options: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WakeAhead(**options)  # type: ignore[arg-type]


def test_at_most_cap_sessions_are_admitted_ahead_until_their_plain_lead_begins() -> None:
    ahead = WakeAhead(cap=2)
    assert ahead.admit("a", plain_ms=5_000, now_ms=0)
    assert ahead.admit("b", plain_ms=3_000, now_ms=0)
    assert not ahead.admit("c", plain_ms=4_000, now_ms=0), "two are live ahead: the cap"
    assert ahead.admit("a", plain_ms=5_000, now_ms=0), "asked again (a retried wake): counted once"
    assert ahead.live_ahead(now_ms=2_999) == 2
    # b's plain lead begins: it no longer counts as ahead.
    assert ahead.live_ahead(now_ms=3_000) == 1
    assert ahead.admit("c", plain_ms=4_000, now_ms=3_000)
    # a's lead moved later: it counts until the new one, once.
    assert ahead.admit("a", plain_ms=6_000, now_ms=3_000)
    assert ahead.live_ahead(now_ms=5_500) == 1
    assert ahead.live_ahead(now_ms=10_000) == 0
    assert not WakeAhead(cap=0).admit("a", plain_ms=1, now_ms=0)
