"""The chat-completions request body: message mapping and history repair."""

from __future__ import annotations

import json
from typing import Any

from dsh.models.base import Message, ModelRequest
from dsh.models.messages import conversation
from dsh.models.openai import SYSTEM_PROMPT
from dsh.models.openai.request import NOT_COMPLETED, build_body, wire_messages
from dsh.session import SessionEvent
from dsh.tools import ToolCall

SYSTEM = {"role": "system", "content": SYSTEM_PROMPT}


def assistant(*calls: tuple[str, str | dict[str, Any]], text: str = "") -> Message:
    return Message(
        role="assistant",
        text=text,
        tool_calls=tuple(ToolCall(id=i, name="echo", arguments=a) for i, a in calls),
    )


def result(call_id: str, value: Any, *, error: bool = False) -> Message:
    return Message(role="tool", tool_call_id=call_id, name="echo", content=value, is_error=error)


def not_completed(call_id: str) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": call_id,
        "content": json.dumps({"error": NOT_COMPLETED}),
    }


def test_the_system_prompt_says_dsh_and_session_local_reminders() -> None:
    assert wire_messages([]) == [SYSTEM]
    assert "dsh" in SYSTEM_PROMPT
    assert "session-local" in SYSTEM_PROMPT


def test_the_body_is_minimal_and_omits_empty_tools() -> None:
    request = ModelRequest(messages=[Message(role="user", text="hi")], tools=[])

    assert build_body(request, model="m", stream=True) == {
        "model": "m",
        "messages": [SYSTEM, {"role": "user", "content": "hi"}],
        "stream": True,
    }


def test_tool_schemas_are_sent_as_given() -> None:
    schema = {"type": "function", "function": {"name": "echo", "parameters": {}}}
    request = ModelRequest(messages=[], tools=[schema])

    assert build_body(request, model="m", stream=False)["tools"] == [schema]


def test_a_plain_assistant_message_has_no_tool_calls_field() -> None:
    wire = wire_messages([Message(role="user", text="hi"), Message(role="assistant", text="yo")])

    assert wire[2] == {"role": "assistant", "content": "yo"}


def test_tool_results_carry_the_json_of_their_value_or_error() -> None:
    wire = wire_messages(
        [
            assistant(("a", {}), ("b", {})),
            result("a", "plain string"),
            result("b", {"code": "not_found", "message": "no such reminder"}, error=True),
        ]
    )

    assert wire[2:] == [
        {"role": "tool", "tool_call_id": "a", "content": '"plain string"'},
        {
            "role": "tool",
            "tool_call_id": "b",
            "content": '{"error": {"code": "not_found", "message": "no such reminder"}}',
        },
    ]


def test_arguments_are_json_text_and_broken_ones_are_wrapped_so_servers_accept_them() -> None:
    wire = wire_messages(
        [
            assistant(
                ("dict", {"city": "Zürich"}),
                ("text", '{"a":1}'),
                ("empty", " "),
                ("broken", '{"a": '),
                ("array", "[1, 2]"),
            )
        ]
    )

    arguments = [call["function"]["arguments"] for call in wire[1]["tool_calls"]]
    assert arguments == [
        '{"city": "Zürich"}',
        '{"a":1}',
        "{}",
        json.dumps({"unparsed_arguments": '{"a": '}),
        json.dumps({"unparsed_arguments": "[1, 2]"}),
    ]
    assert wire[1]["tool_calls"][0] == {
        "id": "dict",
        "type": "function",
        "function": {"name": "echo", "arguments": '{"city": "Zürich"}'},
    }


def test_unanswered_calls_get_a_not_completed_result_in_call_order() -> None:
    wire = wire_messages(
        [
            Message(role="user", text="go"),
            assistant(("a", {}), ("b", {}), ("c", {}), text="working"),
            result("c", 3),
            result("a", 1),
        ]
    )

    assert wire[3:] == [
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        not_completed("b"),
        {"role": "tool", "tool_call_id": "c", "content": "3"},
    ]


def test_results_that_answer_no_call_are_dropped_and_duplicates_keep_the_first() -> None:
    wire = wire_messages(
        [
            result("orphan", 0),
            Message(role="user", text="go"),
            assistant(("a", {})),
            result("a", "first"),
            result("a", "second"),
            result("stray", "x"),
        ]
    )

    assert wire[1:] == [
        {"role": "user", "content": "go"},
        wire[2],
        {"role": "tool", "tool_call_id": "a", "content": '"first"'},
    ]


def test_consecutive_user_messages_are_joined() -> None:
    wire = wire_messages(
        [
            Message(role="user", text="first"),
            Message(role="user", text="second"),
            Message(role="assistant", text="ok"),
            Message(role="user", text="third"),
        ]
    )

    assert wire[1:] == [
        {"role": "user", "content": "first\n\nsecond"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "third"},
    ]


def test_a_cancelled_turn_in_a_stored_session_is_repaired() -> None:
    def event(seq: int, type: str, data: Any) -> SessionEvent:
        return SessionEvent(seq=seq, type=type, time=0, data=data)

    events = [
        event(0, "message/user", {"text": "remind me", "source": {"kind": "user"}}),
        event(
            1,
            "message/assistant",
            {"text": "", "toolCalls": [{"id": "c1", "name": "schedule_create", "arguments": {}}]},
        ),
        event(2, "turn/end", {"status": "error", "error": {"code": "cancelled", "message": "x"}}),
        event(3, "session/end-seed", {}),
        event(4, "message/user", {"text": "did it work?", "source": {"kind": "user"}}),
    ]

    wire = wire_messages(conversation(events))

    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "user"]
    assert wire[3] == not_completed("c1")
