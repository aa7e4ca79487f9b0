from __future__ import annotations

from pydantic import JsonValue

from dsh.models.base import Message
from dsh.models.messages import conversation
from dsh.session import SessionEvent
from dsh.tools import ToolCall


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
        event(3, "tool/result", {"callId": "c2", "name": "t", "error": {"code": "x"}}),
        event(4, "turn/end", {"status": "ok"}),
    ]

    assert conversation(events) == [
        Message(role="user", text="hi", source={"kind": "user"}),
        Message(role="assistant", tool_calls=(ToolCall("c1", "t", {"a": 1}),)),
        Message(role="tool", tool_call_id="c1", name="t", content=[1]),
        Message(role="tool", tool_call_id="c2", name="t", content={"code": "x"}, is_error=True),
    ]


def test_markers_plugin_events_and_non_object_data_are_left_out() -> None:
    events = [
        event(0, "session/end-seed", {}),
        event(1, "schedule/change", {"version": 1, "change": "dispatch", "id": "rem-1"}),
        event(2, "message/user", "not an object"),
        event(3, "turn/end", {"status": "ok"}),
    ]

    assert conversation(events) == []


def test_malformed_fields_fall_back_to_safe_defaults() -> None:
    events = [
        event(0, "message/user", {"text": "x", "source": "web"}),
        event(1, "message/assistant", {"text": "y", "toolCalls": "nope"}),
        event(2, "message/assistant", {"toolCalls": ["junk", {"name": "t", "arguments": 5}]}),
    ]

    assert conversation(events) == [
        Message(role="user", text="x", source={"kind": "user"}),
        Message(role="assistant", text="y"),
        Message(role="assistant", tool_calls=(ToolCall("", "t", {}),)),
    ]
