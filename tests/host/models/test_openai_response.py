"""Reading chat-completions answers: whole replies, chunks, tool-call fragments, error bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dsh.models.base import ModelReply, ToolCall
from dsh.models.errors import ModelError
from dsh.models.openai.response import ReplyBuilder, error_detail, parse_chunk, parse_completion


def fragments(*calls: dict[str, Any]) -> ModelReply:
    builder = ReplyBuilder()
    for call in calls:
        chunk = parse_chunk(json.dumps({"choices": [{"delta": {"tool_calls": [call]}}]}))
        assert chunk.first is not None and chunk.first.delta is not None
        for fragment in chunk.first.delta.tool_calls or ():
            builder.add_tool_call(fragment)
    return builder.reply()


def test_only_the_first_choice_is_read() -> None:
    text = json.dumps(
        {
            "choices": [
                {"index": 1, "message": {"content": "second"}},
                {"index": 0, "message": {"content": "first", "refusal": None}},
            ]
        }
    )

    assert parse_completion(text) == ModelReply(text="first")


def test_a_whole_reply_without_call_ids_gets_positional_ids_and_object_arguments_become_text() -> (
    None
):
    text = json.dumps(
        {
            "choices": [
                {
                    "message": {
                        "content": None,
                        "tool_calls": [
                            {"function": {"name": "a", "arguments": {"x": 1}}},
                            {"function": {"name": "b"}},
                        ],
                    }
                }
            ]
        }
    )

    assert parse_completion(text).tool_calls == (
        ToolCall(id="call_0", name="a", arguments='{"x": 1}'),
        ToolCall(id="call_1", name="b", arguments=""),
    )


def test_fragments_without_an_index_follow_their_id() -> None:
    reply = fragments(
        {"id": "x", "function": {"name": "first", "arguments": '{"a":'}},
        {"function": {"arguments": "1}"}},
        {"id": "y", "function": {"name": "second", "arguments": "{}"}},
        {"id": "x", "function": {"arguments": ""}},
    )

    assert reply.tool_calls == (
        ToolCall(id="x", name="first", arguments='{"a":1}'),
        ToolCall(id="y", name="second", arguments="{}"),
    )


def test_a_first_fragment_without_index_or_id_starts_call_zero_and_names_are_kept() -> None:
    reply = fragments(
        {"function": {"name": "only", "arguments": "{"}},
        {"id": "late", "index": 0, "function": {"name": "renamed", "arguments": "}"}},
        {"index": 0},
    )

    assert reply.tool_calls == (ToolCall(id="late", name="only", arguments="{}"),)


def test_calls_come_out_in_index_order_whatever_order_they_started_in() -> None:
    reply = fragments(
        {"index": 2, "id": "c", "function": {"name": "third"}},
        {"index": 0, "id": "a", "function": {"name": "first"}},
    )

    assert [call.id for call in reply.tool_calls] == ["a", "c"]


def test_usage_only_chunks_and_other_choices_have_no_first_choice() -> None:
    assert parse_chunk('{"choices": [], "usage": {}}').first is None
    assert parse_chunk('{"choices": [{"index": 1, "delta": {}}]}').first is None
    assert parse_chunk('{"object": "chat.completion.chunk"}').first is None


def test_a_null_error_field_is_not_an_error() -> None:
    chunk = parse_chunk('{"error": null, "choices": [{"delta": {"content": "x"}}]}')

    assert chunk.first is not None and chunk.first.delta is not None
    assert chunk.first.delta.content == "x"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"error": {"message": "overloaded"}}, "overloaded"),
        ({"error": "plain text"}, "plain text"),
        ({"error": {"code": 7}}, '{"code": 7}'),
    ],
)
def test_a_chunk_reporting_an_error_is_model_unavailable(payload: Any, message: str) -> None:
    with pytest.raises(ModelError) as caught:
        parse_chunk(json.dumps(payload))

    assert caught.value.code == "model_unavailable"
    assert caught.value.message == f"the server reported an error while streaming: {message}"


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ('{"error": {"message": "Invalid model", "type": "x"}}', "Invalid model"),
        ('{"error": "model not found"}', "model not found"),
        ('{"detail": "Not Found"}', "Not Found"),
        ('{"message": "quota"}', "quota"),
        ('{"detail": [{"loc": ["body"]}]}', '{"detail": [{"loc": ["body"]}]}'),
        ("[1]", "[1]"),
        ("upstream connect error", "upstream connect error"),
        ("", "(empty body)"),
        ("x" * 400, "x" * 300 + "…"),
    ],
)
def test_error_bodies_yield_their_human_message(body: str, detail: str) -> None:
    assert error_detail(body) == detail


def test_a_reply_nested_past_the_parser_is_a_bad_response_not_a_crash() -> None:
    depth = 100_000
    text = '{"choices": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(ModelError) as info:
        parse_completion(text)
    assert info.value.code == "bad_response"
    assert "nested too deep" in info.value.message
    with pytest.raises(ModelError, match="nested too deep"):
        parse_chunk(text)


def test_object_arguments_with_a_nan_reach_the_pipeline_as_text() -> None:
    text = json.dumps(
        {
            "choices": [
                {
                    "message": {
                        "content": "ok",
                        "tool_calls": [
                            {"id": "a", "function": {"name": "t", "arguments": {"x": float("nan")}}}
                        ],
                    }
                }
            ]
        }
    )
    reply = parse_completion(text)
    assert reply.text == "ok"
    assert reply.tool_calls[0].arguments == '{"x": NaN}'
