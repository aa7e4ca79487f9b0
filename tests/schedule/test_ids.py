from __future__ import annotations

import pytest

from dsh_tool_schedule.ids import MAX_REMINDER_NUMBER, format_reminder_id, parse_reminder_id


def test_ids_are_rem_and_a_positive_number() -> None:
    assert format_reminder_id(1) == "rem-1"
    assert format_reminder_id(42) == "rem-42"
    assert parse_reminder_id("rem-42") == ("rem-42", 42)
    assert parse_reminder_id(f"rem-{MAX_REMINDER_NUMBER}")[1] == MAX_REMINDER_NUMBER


@pytest.mark.parametrize(
    "text",
    [
        "rem-0",
        "rem-01",
        "rem--1",
        "rem-",
        "REM-1",
        "rem-1 ",
        " rem-1",
        "rem-1\n",
        "rem-1a",
        "reminder-1",
        "rem-١",  # an Arabic-Indic digit: int() would take it, the pattern must not
        f"rem-{MAX_REMINDER_NUMBER + 1}",
        "rem-99999999999999999",
        "",
    ],
)
def test_malformed_ids_are_rejected_with_the_expected_shape(text: str) -> None:
    with pytest.raises(ValueError, match="rem-<n>"):
        parse_reminder_id(text)


@pytest.mark.parametrize("number", [0, -1, MAX_REMINDER_NUMBER + 1])
def test_numbers_outside_the_safe_range_make_no_id(number: int) -> None:
    with pytest.raises(ValueError, match="outside"):
        format_reminder_id(number)
