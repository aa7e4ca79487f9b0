"""The chat-completions request body: message mapping and history repair."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh.models.base import Message, ModelRequest, ToolCall
from dsh.models.messages import conversation
from dsh.models.openai import SYSTEM_PROMPT, OpenAIConfig
from dsh.models.openai.request import NOT_COMPLETED, build_body, wire_messages
from dsh.session.event import SessionEvent

SYSTEM = {"role": "system", "content": SYSTEM_PROMPT}


def assistant(
    *calls: tuple[str, str | dict[str, Any]], text: str = "", reasoning: str | None = None
) -> Message:
    return Message(
        role="assistant",
        text=text,
        tool_calls=tuple(ToolCall(id=i, name="echo", arguments=a) for i, a in calls),
        reasoning=reasoning,
    )


def config(profile: str = "generic", **fields: Any) -> OpenAIConfig:
    return OpenAIConfig(base_url="http://127.0.0.1:9/v1", model="m", profile=profile, **fields)


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

    assert build_body(request, config(), stream=True) == {
        "model": "m",
        "messages": [SYSTEM, {"role": "user", "content": "hi"}],
        "stream": True,
    }


def test_tool_schemas_are_sent_as_given() -> None:
    schema = {"type": "function", "function": {"name": "echo", "parameters": {}}}
    request = ModelRequest(messages=[], tools=[schema])

    assert build_body(request, config(), stream=False)["tools"] == [schema]


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


# -- reasoning passed back -----------------------------------------------------------

USER = Message(role="user", text="u")


def test_deepseek_gets_reasoning_back_on_every_assistant_message_of_a_turn_with_tool_calls() -> (
    None
):
    messages = [
        USER,
        assistant(("a", {}), reasoning="think a"),
        result("a", 1),
        assistant(("b", {}), reasoning="think b"),
        result("b", 2),
        assistant(text="answer", reasoning="think answer"),
        Message(role="user", text="next"),
        assistant(text="plain", reasoning="ignored by the provider"),
    ]

    wire = wire_messages(messages, pass_back="reasoning_content")

    sent = [(m["role"], m.get("reasoning_content")) for m in wire if m["role"] == "assistant"]
    assert sent == [
        ("assistant", "think a"),
        ("assistant", "think b"),
        ("assistant", "think answer"),
        ("assistant", None),
    ]
    assert "reasoning_content" not in wire[-1]


def test_a_tool_call_turn_without_stored_reasoning_passes_back_an_empty_string() -> None:
    wire = wire_messages(
        [USER, assistant(("a", {})), result("a", 1), assistant(text="done")],
        pass_back="reasoning_content",
    )

    assert [m["reasoning_content"] for m in wire if m["role"] == "assistant"] == ["", ""]


def test_joined_user_messages_still_bound_the_turn_whose_reasoning_is_passed_back() -> None:
    wire = wire_messages(
        [
            USER,
            assistant(text="no tools", reasoning="r0"),
            USER,
            USER,
            assistant(("c", {}), reasoning="r1"),
        ],
        pass_back="reasoning_content",
    )

    assert [m["role"] for m in wire] == ["system", "user", "assistant", "user", "assistant", "tool"]
    assert "reasoning_content" not in wire[2]
    assert wire[4]["reasoning_content"] == "r1"
    assert wire[5] == not_completed("c")


def test_without_a_pass_back_rule_no_reasoning_is_sent_anywhere() -> None:
    wire = wire_messages([USER, assistant(("a", {}), reasoning="secret"), result("a", 1)])

    assert "secret" not in json.dumps(wire)


@pytest.mark.parametrize(
    ("profile", "sent"),
    [("deepseek", True), ("openai", False), ("ollama", False), ("generic", False)],
)
def test_only_the_profile_that_requires_it_passes_reasoning_back(profile: str, sent: bool) -> None:
    request = ModelRequest(
        messages=[USER, assistant(("a", {}), reasoning="r"), result("a", 1)], tools=[]
    )

    body = build_body(request, config(profile), stream=True)

    assert ("reasoning_content" in body["messages"][2]) is sent


# -- thinking and sampling ------------------------------------------------------------


def body_of(profile: str, **fields: Any) -> dict[str, Any]:
    request = ModelRequest(messages=[USER], tools=[])
    body = build_body(request, config(profile, **fields), stream=True)
    return {key: value for key, value in body.items() if key not in ("model", "messages", "stream")}


@pytest.mark.parametrize(
    ("profile", "fields", "extra"),
    [
        ("deepseek", {}, {}),
        ("deepseek", {"thinking": "enabled"}, {"thinking": {"type": "enabled"}}),
        ("deepseek", {"thinking": "disabled"}, {"thinking": {"type": "disabled"}}),
        (
            "deepseek",
            {"thinking": "enabled", "reasoning_effort": "max"},
            {"thinking": {"type": "enabled"}, "reasoning_effort": "max"},
        ),
        ("openai", {"reasoning_effort": "low"}, {"reasoning_effort": "low"}),
        ("ollama", {"thinking": "disabled"}, {"reasoning_effort": "none"}),
        ("ollama", {"thinking": "enabled"}, {}),
        ("ollama", {"reasoning_effort": "high"}, {"reasoning_effort": "high"}),
        (
            "generic",
            {"reasoning_effort": "whatever-it-takes"},
            {"reasoning_effort": "whatever-it-takes"},
        ),
    ],
)
def test_thinking_and_effort_are_sent_the_way_each_provider_documents(
    profile: str, fields: dict[str, Any], extra: dict[str, Any]
) -> None:
    assert body_of(profile, **fields) == extra


@pytest.mark.parametrize(
    ("profile", "fields", "sampling_sent"),
    [
        ("deepseek", {}, False),  # thinking is on by default
        ("deepseek", {"thinking": "enabled"}, False),
        ("deepseek", {"thinking": "disabled"}, True),
        ("openai", {}, True),
        ("openai", {"reasoning_effort": "none"}, True),
        ("openai", {"reasoning_effort": "minimal"}, False),
        ("ollama", {"thinking": "enabled"}, True),  # Ollama honours them while thinking
        ("generic", {"reasoning_effort": "high"}, True),
    ],
)
def test_sampling_parameters_a_thinking_model_ignores_are_not_sent(
    profile: str, fields: dict[str, Any], sampling_sent: bool
) -> None:
    body = body_of(profile, temperature=0.3, top_p=0.9, **fields)

    sampling = {key: body[key] for key in ("temperature", "top_p") if key in body}
    assert sampling == ({"temperature": 0.3, "top_p": 0.9} if sampling_sent else {})


def test_a_message_from_a_known_zone_starts_with_when_it_was_sent_in_that_zone_and_utc() -> None:
    sent = 1_767_598_200_000  # 2026-01-05T07:30:00Z
    messages = [
        Message(role="user", text="remind me at 9", time_zone="Europe/Berlin", time=sent),
        Message(role="assistant", text="ok"),
        Message(role="user", text="and at 10", time_zone="Asia/Kolkata", time=sent + 60_000),
        Message(role="user", text="no zone", time=sent),
        Message(role="user", text="no time", time_zone="UTC"),
        Message(
            role="user",
            text="[Scheduled reminder]",
            source={"kind": "schedule"},
            time_zone="UTC",
            time=sent,
        ),
        Message(role="user", text="odd zone", time_zone="Not/AZone", time=sent),
        Message(role="user", text="a folder", time_zone="Europe", time=sent),
    ]
    wire = wire_messages(messages)
    assert wire[1] == {
        "role": "user",
        "content": "[sent 2026-01-05T08:30+01:00 (Europe/Berlin) = 2026-01-05T07:30Z]\n"
        "remind me at 9",
    }
    assert wire[3]["content"] == (
        "[sent 2026-01-05T13:01+05:30 (Asia/Kolkata) = 2026-01-05T07:31Z]\nand at 10"
        "\n\nno zone\n\nno time\n\n[Scheduled reminder]\n\nodd zone\n\na folder"
    )
    assert "time_zone" in SYSTEM_PROMPT and "[sent " in SYSTEM_PROMPT


def test_the_stamp_of_a_message_never_changes_as_the_conversation_grows() -> None:
    first = Message(role="user", text="hi", time_zone="America/New_York", time=1_767_598_200_000)
    later = [first, Message(role="assistant", text="yo"), Message(role="user", text="more")]
    assert wire_messages([first])[1] == wire_messages(later)[1]
