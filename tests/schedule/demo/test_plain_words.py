"""What the demo says to a person never uses the host's words (live, cold, events...)."""

from __future__ import annotations

import re

import pytest

from dsh import Message
from dsh.models.demo import help_text as host_help
from dsh_tool_schedule.demo import replies
from dsh_tool_schedule.demo.kinds import CreateAt
from dsh_tool_schedule.demo.results import _ZH_ERRORS, tool_result
from dsh_tool_schedule.demo.words import fires_words

#: The host's terms, which a person should never have to learn (docs/DESIGN.md, plain words).
BANNED_EN = re.compile(r"\b(live|cold|events?|session-local|sessions?)\b", re.IGNORECASE)
BANNED_ZH = re.compile(r"会话|在线|仅限本")

VIEW = {
    "id": "rem-1",
    "prompt": "stretch",
    "rule": {"kind": "at", "at": "2026-01-02T08:00"},
    "timeZone": "UTC",
    "nextAt": "2026-01-02T08:00:00.000Z",
    "state": "scheduled",
    "deliveryMode": "session-local",
}


def said(zh: bool) -> list[str]:
    """Everything the demo's fixed phrases say in one language."""
    created = [
        tool_result(
            Message(role="tool", name="schedule_create", tool_call_id="c", content=content),
            zh=zh,
            intent=CreateAt("stretch", None, 8, 0),
            today="2026-01-01",
        )
        for content in ({**VIEW, "firesWhenClosed": True}, {**VIEW, "firesWhenClosed": False})
    ]
    listed = tool_result(
        Message(role="tool", name="schedule_list", tool_call_id="c", content={"reminders": [VIEW]}),
        zh=zh,
    )
    texts = [
        *created,
        listed,
        replies.help_text(zh, reminders_enabled=False),
        replies.unclear(zh),
        replies.reminder("stretch", "rem-1", zh),
        host_help(zh, []),
        fires_words(True, zh),
        fires_words(False, zh),
    ]
    if zh:
        texts += list(_ZH_ERRORS.values())
    return texts


@pytest.mark.parametrize("zh", [False, True])
def test_the_demo_never_says_the_hosts_words(zh: bool) -> None:
    banned = BANNED_ZH if zh else BANNED_EN
    for text in said(zh):
        # An overlay's file name is a command to type, not a word to read.
        readable = text.replace("overlays/web-schedule", "")
        assert not banned.search(readable), text


def test_the_two_setups_say_different_true_things() -> None:
    assert "closed" in fires_words(True, zh=False) and "open" in fires_words(False, zh=False)
    assert "关闭" in fires_words(True, zh=True) and "打开" in fires_words(False, zh=True)
