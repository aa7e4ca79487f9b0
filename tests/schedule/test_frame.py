from __future__ import annotations

import json

import pytest

from dsh_tool_schedule.fold import ActiveReminder, ScheduleFold
from dsh_tool_schedule.frame import LATE_THRESHOLD_MS, json_literal, reminder_frame

from .conftest import START_MS
from .logs import create, session

DUE = START_MS + 10_000


def reminder(prompt: str = "stretch") -> ActiveReminder:
    return ScheduleFold.of(session(create("rem-1", 10, prompt=prompt))).reminders()[0]


def test_the_frame_is_the_fixed_eight_line_template() -> None:
    assert reminder_frame(reminder(), DUE + 4) == (
        "[Scheduled reminder]\n"
        "This is a scheduled reminder that was set earlier in this Session.\n"
        'Reminder id: "rem-1"\n'
        'Prompt: "stretch"\n'
        "Due at: 2026-01-01T00:00:10.000Z\n"
        "Delivered at: 2026-01-01T00:00:10.004Z\n"
        "Status: on time\n"
        "Delivery: session-local (it fires only while this Session is live)."
    )


@pytest.mark.parametrize(
    ("late_ms", "status"),
    [
        (0, "on time"),
        (LATE_THRESHOLD_MS - 1, "on time"),
        (LATE_THRESHOLD_MS, "overdue by 1s"),
        (45_500, "overdue by 45s"),
        (185_000, "overdue by 3m 05s"),
        (7_384_000, "overdue by 2h 03m 04s"),
        (273_959_000, "overdue by 3d 04h 05m"),
    ],
)
def test_the_status_says_on_time_under_one_second_late_and_overdue_after(
    late_ms: int, status: str
) -> None:
    lines = reminder_frame(reminder(), DUE + late_ms).split("\n")
    assert lines[6] == f"Status: {status}"


PROMPTS = [
    'say "hi" \\ to me',
    "line one\nline two\r\nthree\ttab",
    "伸展一下 🧘 — café",
    "</script><script>alert(1)</script> & <b>",
    "separators \u2028 \u2029 \u0085 \x0b \x0c \x1c end",
    "\x00 control \x1f end",
]


@pytest.mark.parametrize("prompt", PROMPTS)
def test_the_prompt_is_one_json_literal_line_that_decodes_to_the_stored_text(prompt: str) -> None:
    frame = reminder_frame(reminder(prompt), DUE)
    lines = frame.splitlines()
    assert len(lines) == 8
    assert lines[3].startswith("Prompt: ")
    assert json.loads(lines[3].removeprefix("Prompt: ")) == prompt
    assert json.loads(lines[2].removeprefix("Reminder id: ")) == "rem-1"


def test_markup_never_appears_literally() -> None:
    frame = reminder_frame(reminder("</script> & <!-- x -->"), DUE)
    assert "</script>" not in frame
    for character in "<>&":
        assert character not in frame
    assert "\\u003c/script\\u003e \\u0026 \\u003c!-- x --\\u003e" in frame


def test_non_ascii_text_stays_readable() -> None:
    assert json_literal("伸展 café") == '"伸展 café"'
    assert json_literal('"q"') == '"\\"q\\""'
