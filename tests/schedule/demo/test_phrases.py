"""The plugin README's phrase table, row by row: what the person says → what the demo does.

The table (between `<!-- demo-phrases -->` markers in plugins/tool-schedule/README.md)
is the one list of phrasings the demo promises; each row runs here as a conversation
with the demo, so the README cannot promise what the demo does not do.
"""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue

from dsh.models import Message, ModelReply, ModelRequest
from dsh.models.base import ToolCall
from dsh.models.demo import answer
from dsh_tool_schedule.demo import ScheduleDemoSkill

README = Path(__file__).resolve().parents[3] / "plugins" / "tool-schedule" / "README.md"
_TABLE = re.compile(r"<!-- demo-phrases -->\n(.*?)<!-- /demo-phrases -->", re.S)
_CALL = re.compile(r"`(schedule_\w+\(.*?\))`")

ZONE = "Europe/Berlin"
NOW = int(datetime(2026, 12, 5, 9, 0, tzinfo=UTC).timestamp() * 1000)  # 10:00 in Berlin
TOOLS = ("schedule_create", "schedule_list", "schedule_delete", "schedule_update")


def view(reminder_id: str, prompt: str, rule: dict[str, JsonValue], next_at: str) -> JsonValue:
    """A listed reminder as `schedule_list` shows it, at revision 1."""
    return {
        "id": reminder_id,
        "prompt": prompt,
        "rule": rule,
        "nextAt": next_at,
        "state": "scheduled",
        "revision": 1,
        "timeZone": ZONE,
    }


LISTED: list[JsonValue] = [
    view("rem-1", "stretch legs", {"kind": "at", "at": "2026-12-05T12:00"}, "2026-12-05T11:00:00Z"),
    view("rem-2", "stretch back", {"kind": "cron", "cron": "0 9 * * *"}, "2026-12-06T08:00:00Z"),
    view("rem-3", "drink water", {"kind": "every", "seconds": 7200}, "2026-12-05T11:00:00Z"),
    view("rem-4", "拉伸", {"kind": "at", "at": "2026-12-06T07:00"}, "2026-12-06T06:00:00Z"),
    view("rem-5", "喝水", {"kind": "every", "seconds": 3600}, "2026-12-05T10:00:00Z"),
]


def rows() -> list[tuple[str, str]]:
    """(the person says, the demo does) for each row of the README's table."""
    found = _TABLE.search(README.read_text(encoding="utf-8"))
    assert found is not None, "the plugin README has no <!-- demo-phrases --> table"
    lines = [line for line in found.group(1).splitlines() if line.startswith("| ")][2:]
    cells = [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in lines]
    return [(said, does) for said, does in cells]


def call(text: str) -> tuple[str, dict[str, Any]]:
    """`schedule_create(prompt="x", at="…")` as the call the demo makes, zone included."""
    parsed = ast.parse(text, mode="eval").body
    assert isinstance(parsed, ast.Call) and isinstance(parsed.func, ast.Name)
    arguments = {item.arg: ast.literal_eval(item.value) for item in parsed.keywords}
    if "at" in arguments or "cron" in arguments:
        arguments["time_zone"] = ZONE
    return parsed.func.id, arguments


def check(step: str, reply: ModelReply) -> None:
    """The demo's reply is what the table's step says: these calls, or these words."""
    calls = [call(found) for found in _CALL.findall(step)]
    if calls:
        assert [(made.name, made.arguments) for made in reply.tool_calls] == calls
        return
    words = re.fullmatch(r"(?:says|asks) “(.*)”", step)
    assert words is not None, f"a step the test cannot read: {step}"
    assert reply.tool_calls == ()
    assert words.group(1) in reply.text


def test_the_table_has_rows_in_both_languages() -> None:
    said = [row[0] for row in rows()]
    assert len(said) >= 40
    assert sum(bool(re.search(r"[\u4e00-\u9fff]", text)) for text in said) >= 15


@pytest.mark.parametrize(("said", "does"), rows())
def test_each_phrase_in_the_readme_does_what_the_table_says(said: str, does: str) -> None:
    messages = re.findall(r"`([^`]+)`", said)
    steps = [step.strip() for step in does.split("→")]
    skill = ScheduleDemoSkill()
    tools = [{"type": "function", "function": {"name": name}} for name in TOOLS]
    conversation: list[Message] = []
    for step in steps:
        if not conversation or conversation[-1].role == "assistant":
            text = messages.pop(0)
            conversation.append(Message(role="user", text=text, time_zone=ZONE, time=NOW))
        reply = answer(ModelRequest(messages=conversation, tools=tools), [skill], now_ms=NOW)
        check(step, reply)
        conversation.append(Message(role="assistant", text=reply.text, tool_calls=reply.tool_calls))
        conversation += [result(made) for made in reply.tool_calls]
    assert messages == [], "the person says more than the table's steps answer"


def result(made: ToolCall) -> Message:
    """What the tool answers: the five reminders for a list, else a plain acknowledgement."""
    content: JsonValue = {"reminders": LISTED} if made.name == "schedule_list" else {"ok": True}
    return Message(role="tool", tool_call_id=made.id, name=made.name, content=content)
