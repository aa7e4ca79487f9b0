from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.fold import FoldError
from dsh_tool_schedule.notice import NOTICE_TYPE, decode_notice, notice_data, notice_view, noticed

from .logs import Entry, create, session, user

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
    assert decode_notice(notice_data(ERROR)).seq == 3
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
