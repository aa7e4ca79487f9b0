from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.fold import FoldError
from dsh_tool_schedule.notice import (
    NOTICE_TYPE,
    DeferredNotice,
    decode_notice,
    deferral_told,
    deferred_data,
    notice_data,
    notice_view,
    noticed,
)

from .conftest import START_MS
from .logs import Entry, create, create2, every, session, user

ERROR = FoldError(3, "dispatch of rem-2, which is never created in this fold")


def notice(**fields: Any) -> Entry:
    return (NOTICE_TYPE, {**notice_data(ERROR), **fields})


def test_a_notice_names_the_rejected_seq_and_the_reason() -> None:
    assert notice_data(ERROR) == {
        "version": 1,
        "notice": "log_invalid",
        "seq": 3,
        "reason": "dispatch of rem-2, which is never created in this fold",
    }
    decoded = decode_notice(notice_data(ERROR))
    assert not isinstance(decoded, DeferredNotice) and decoded.seq == 3
    assert notice_view(notice_data(ERROR)) == {
        "notice": "log_invalid",
        "seq": 3,
        "reason": "dispatch of rem-2, which is never created in this fold",
        "deliveryMode": "session-local",
    }


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({**notice_data(ERROR), "version": 2}, "version"),
        ({**notice_data(ERROR), "version": True}, "version"),
        ({**notice_data(ERROR), "notice": "other"}, "notice"),
        ({**notice_data(ERROR), "seq": -1}, "seq"),
        ({**notice_data(ERROR), "reason": ""}, "reason"),
        ({**notice_data(ERROR), "extra": 1}, "extra"),
        ([], "data"),
    ],
)
def test_a_malformed_notice_has_no_view(data: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=f"invalid schedule/notice: .*{problem}"):
        decode_notice(data)
    assert notice_view(data) is None


def test_a_log_knows_whether_a_rejection_was_already_told() -> None:
    log = session(create("rem-1"), user(), user(), ("schedule/change", {}), user())
    assert not noticed(log, ERROR)
    told = session(create("rem-1"), user(), user(), ("schedule/change", {}), notice(), user())
    assert noticed(told, ERROR)
    other = session(create("rem-1"), user(), user(), ("schedule/change", {}), notice(seq=9))
    assert not noticed(other, ERROR)
    broken = session(create("rem-1"), user(), user(), ("schedule/change", {}), (NOTICE_TYPE, []))
    assert not noticed(broken, ERROR)


# -- deliveries deferred by the Session's budget ----------------------------------------------

DEFERRED = deferred_data("hour", 60, START_MS + 3_600_000)


def test_a_deferral_notice_names_the_window_its_size_and_when_delivery_resumes() -> None:
    assert DEFERRED == {
        "version": 1,
        "notice": "deliveries_deferred",
        "limit": "hour",
        "max": 60,
        "until": "2026-01-01T01:00:00.000Z",
        "reason": "60 reminder turns in the last hour, the most this conversation may start; "
        "reminders that fall due wait and are delivered from 2026-01-01T01:00:00.000Z on, "
        "none lost",
    }
    assert deferred_data("day", 480, START_MS)["limit"] == "day"
    assert isinstance(decode_notice(DEFERRED), DeferredNotice)
    assert notice_view(DEFERRED) == {
        "notice": "deliveries_deferred",
        "limit": "hour",
        "max": 60,
        "until": "2026-01-01T01:00:00.000Z",
        "reason": DEFERRED["reason"],
        "deliveryMode": "session-local",
    }
    assert notice_view({**DEFERRED, "limit": "week"}) is None
    assert notice_view({**DEFERRED, "until": "tomorrow"}) is None


def test_a_deferral_is_told_at_most_once_an_hour() -> None:
    hourly = create2(every(3600, first_ms=START_MS + 60_000))
    now = START_MS + 3_600_000
    assert not deferral_told(session(hourly), now)
    told = session(hourly, (NOTICE_TYPE, DEFERRED), user(), time=START_MS + 1)
    assert deferral_told(told, now)
    assert not deferral_told(told, now + 1)
    # Another kind of notice, or a malformed one, is no deferral notice.
    other = (NOTICE_TYPE, notice_data(ERROR))
    broken = (NOTICE_TYPE, {"version": 1, "notice": "deliveries_deferred"})
    assert not deferral_told(session(hourly, other, broken, time=START_MS + 1), now)
