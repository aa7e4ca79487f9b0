"""`storm-pg`'s bookkeeping: merging the hosts' probe tracks and counting stored dispatches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.cases.storm_pg import logged, merge_tracks, stored_dispatches

MS = 1_000_000  # ns


def _track(due: int, durable: int | None, followup: int | None) -> dict[str, int | None]:
    return {
        "due_ns": due * MS,
        "dispatch_seq": 1,
        "dispatched_ns": None if durable is None else (durable - 1) * MS,
        "durable_ns": None if durable is None else durable * MS,
        "followup_ns": None if followup is None else followup * MS,
    }


def test_each_session_counts_once_at_the_host_that_made_its_dispatch_durable() -> None:
    merged = merge_tracks(
        {
            "host1": {"a": _track(1000, 1010, 1020), "b": _track(1000, 1030, 1050)},
            "host2": {"c": _track(1000, 1005, 1007)},
        },
        "abc",
    )

    assert merged["by_host"] == {"host1": 2, "host2": 1}
    assert sorted(merged["durable"]) == [5.0, 10.0, 30.0]
    assert sorted(merged["followup"]) == [7.0, 20.0, 50.0]
    assert merged["missing"] == 0
    assert merged["dispatched_twice"] == 0


def test_a_session_both_hosts_dispatched_is_counted_twice_and_measured_at_the_first() -> None:
    merged = merge_tracks(
        {
            "host1": {"a": _track(1000, 1040, 1045)},
            "host2": {"a": _track(1000, 1010, 1015)},
        },
        ["a"],
    )

    assert merged["dispatched_twice"] == 1
    assert merged["by_host"] == {"host1": 1, "host2": 1}
    assert merged["durable"] == [10.0]
    assert merged["followup"] == [15.0]


def test_a_session_without_a_durable_dispatch_or_a_follow_up_is_missing() -> None:
    merged = merge_tracks(
        {
            "host1": {"a": _track(1000, None, None), "b": _track(1000, 1002, None)},
            "host2": {},
        },
        ["a", "b", "c"],  # no host reported c: it was never dispatched
    )

    assert merged["missing"] == 3
    assert merged["by_host"] == {"host1": 1, "host2": 0}
    assert merged["durable"] == [2.0]
    assert merged["followup"] == []


def _body(change: str) -> str:
    return json.dumps({"seq": 1, "type": "schedule/change", "data": {"change": change}})


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("a", _body("dispatch")), ("b", None)], {"a": 1, "b": 0}),
        ([("a", _body("dispatch")), ("a", _body("dispatch"))], {"a": 2}),
        ([("a", _body("update")), ("a", _body("dispatch"))], {"a": 1}),
        ([("a", _body("delete"))], {"a": 0}),
    ],
)
def test_stored_dispatches_counts_every_session_and_only_dispatches(
    rows: list[tuple[str, str | None]], expected: dict[str, int]
) -> None:
    assert stored_dispatches(rows) == expected


def test_a_hosts_log_is_counted_without_the_pools_shutdown_noise(tmp_path: Path) -> None:
    log = tmp_path / "host1.stderr"
    log.write_text(
        "query cancellation interrupted (CancelledError): closing connection\n"
        "renewing 3 session leases failed: deadlock detected\n"
        "discarding closed connection: <psycopg.AsyncConnection [BAD]>\n"
        "renewing 3 session leases failed: deadlock detected\n"
        "session s1: stored again after 1 failed attempt\n",
        encoding="utf-8",
    )

    assert logged(log) == {
        "lines": 3,
        "first": [
            "renewing 3 session leases failed: deadlock detected",
            "session s1: stored again after 1 failed attempt",
        ],
    }
    assert logged(tmp_path / "missing.stderr") == {"lines": 0, "first": []}
