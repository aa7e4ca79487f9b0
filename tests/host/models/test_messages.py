from __future__ import annotations

import pytest
from pydantic import JsonValue

from dsh.models.base import Message, ToolCall
from dsh.models.messages import conversation
from dsh.session.errors import PayloadError
from dsh.session.event import SessionEvent


def event(seq: int, type: str, data: JsonValue) -> SessionEvent:
    return SessionEvent(seq=seq, type=type, time=0, data=data)


def test_conversation_events_become_messages_in_order() -> None:
    events = [
        event(0, "message/user", {"text": "hi", "source": {"kind": "user"}}),
        event(
            1,
            "message/assistant",
            {"text": "", "toolCalls": [{"id": "c1", "name": "t", "arguments": {"a": 1}}]},
        ),
        event(2, "tool/result", {"callId": "c1", "name": "t", "value": [1]}),
        event(
            3, "tool/result", {"callId": "c2", "name": "t", "error": {"code": "x", "message": "m"}}
        ),
        event(4, "turn/end", {"status": "ok"}),
    ]

    assert conversation(events) == [
        Message(role="user", text="hi", source={"kind": "user"}, time=0),
        Message(role="assistant", tool_calls=(ToolCall("c1", "t", {"a": 1}),)),
        Message(role="tool", tool_call_id="c1", name="t", content=[1]),
        Message(
            role="tool",
            tool_call_id="c2",
            name="t",
            content={"code": "x", "message": "m"},
            is_error=True,
        ),
    ]


def test_markers_and_plugin_events_are_left_out() -> None:
    events = [
        event(0, "session/end-seed", {}),
        event(1, "schedule/change", {"version": 1, "change": "dispatch", "id": "rem-1"}),
        event(2, "session/title", {"title": "Plans"}),
        event(3, "turn/end", {"status": "ok"}),
    ]

    assert conversation(events) == []


def test_stored_reasoning_is_kept_beside_the_text_and_the_zone_and_time_come_along() -> None:
    events = [
        SessionEvent(
            seq=0,
            type="message/user",
            time=1_767_225_600_000,
            data={"text": "x", "source": {"kind": "user"}, "timeZone": "Asia/Tokyo"},
        ),
        event(1, "message/assistant", {"text": "y", "toolCalls": [], "reasoning": "hmm"}),
        event(2, "message/assistant", {"text": "z", "toolCalls": []}),
    ]

    assert conversation(events) == [
        Message(
            role="user",
            text="x",
            source={"kind": "user"},
            time_zone="Asia/Tokyo",
            time=1_767_225_600_000,
        ),
        Message(role="assistant", text="y", reasoning="hmm"),
        Message(role="assistant", text="z", reasoning=None),
    ]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("not an object", "data: expected a JSON object"),
        ({"text": "x", "source": "web"}, "source"),
        ({"text": "y", "toolCalls": "nope"}, "toolCalls"),
        ({"toolCalls": []}, "text: Field required"),
    ],
)
def test_a_malformed_conversation_event_is_an_error_naming_it(
    data: JsonValue, problem: str
) -> None:
    kind = "message/user" if "source" in str(data) or isinstance(data, str) else "message/assistant"
    with pytest.raises(PayloadError, match=f"event 4 \\({kind}\\): .*{problem}"):
        conversation([event(4, kind, data)])
