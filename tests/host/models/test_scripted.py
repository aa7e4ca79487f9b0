from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh.models import ModelReply, ModelRequest, ScriptedModel, StreamSink
from dsh.models.base import ToolCall
from dsh.models.errors import ModelError, ScriptError
from dsh.models.scripted import parse_script

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(messages=(), tools=())


def write(tmp_path: Path, content: Any, name: str = "script.json") -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return path


async def test_replies_are_returned_in_order_then_the_script_is_exhausted(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {
                "text": "Setting it.",
                "toolCalls": [
                    {"name": "schedule_create", "arguments": {"prompt": "s", "after_seconds": 1}}
                ],
            },
            {"text": "Done."},
        ],
    )
    model = ScriptedModel.from_file(path)
    assert model.remaining == 2

    first = await model.complete(REQUEST)
    second = await model.complete(REQUEST)

    assert first == ModelReply(
        text="Setting it.",
        tool_calls=(ToolCall("call_1", "schedule_create", {"prompt": "s", "after_seconds": 1}),),
    )
    assert second == ModelReply(text="Done.")
    assert model.remaining == 0
    with pytest.raises(ModelError) as caught:
        await model.complete(REQUEST)
    assert caught.value.code == "model_unavailable"
    assert "exhausted" in caught.value.message
    assert str(path) in caught.value.message


async def test_a_scripted_reasoning_streams_on_its_channel_and_is_returned(tmp_path: Path) -> None:
    model = ScriptedModel.from_file(
        write(tmp_path, [{"text": "Done.", "reasoning": "It is set."}, {"reasoning": ""}])
    )
    events: list[tuple[str, str]] = []
    sink = StreamSink(
        lambda text: events.append(("answer", text)),
        lambda text: events.append(("reasoning", text)),
    )

    first = await model.complete(REQUEST, on_delta=sink)
    second = await model.complete(REQUEST, on_delta=sink)

    assert first == ModelReply(text="Done.", reasoning="It is set.")
    assert second == ModelReply()
    assert "".join(text for channel, text in events if channel == "reasoning") == "It is set."
    assert events[0][0] == "reasoning"


def test_a_reasoning_that_is_not_text_names_the_reply() -> None:
    with pytest.raises(ScriptError, match=r"\[0\]\.reasoning: Input should be a valid string"):
        parse_script(json.dumps([{"reasoning": ["no"]}]))


def test_both_reply_keys_are_optional_and_ids_are_numbered_across_the_file() -> None:
    replies = parse_script(
        json.dumps(
            [
                {},
                {"toolCalls": [{"name": "a"}, {"id": "mine", "name": "b"}]},
                {"toolCalls": [{"name": "c", "arguments": '{"raw": '}]},
            ]
        )
    )

    assert replies == [
        ModelReply(),
        ModelReply(tool_calls=(ToolCall("call_1", "a", {}), ToolCall("mine", "b", {}))),
        ModelReply(tool_calls=(ToolCall("call_3", "c", '{"raw": '),)),
    ]


def test_an_empty_script_is_exhausted_from_the_start() -> None:
    assert parse_script("[]") == []


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[{", "the file: Invalid JSON"),
        ({"text": "not a list"}, "the file: Input should be a valid array"),
        ([{"text": 1}], "[0].text: Input should be a valid string"),
        ([{"tool_calls": []}], "[0].tool_calls: Extra inputs are not permitted"),
        ([{}, {"toolCalls": [{"arguments": {}}]}], "[1].toolCalls[0].name: Field required"),
        ([{"toolCalls": [{"name": ""}]}], "[0].toolCalls[0].name: String should have at least"),
        ([{"toolCalls": [{"name": "x", "id": ""}]}], "[0].toolCalls[0].id: String should have"),
        (
            [{"toolCalls": [{"name": "x", "arguments": [1]}]}],
            "[0].toolCalls[0].arguments: Value error, must be a JSON object or a string",
        ),
        ([{"toolCalls": [{"name": "x", "extra": 1}]}], "[0].toolCalls[0].extra: Extra inputs"),
    ],
)
def test_a_bad_script_raises_a_script_error_naming_the_file_and_the_problem(
    tmp_path: Path, content: Any, problem: str
) -> None:
    path = write(tmp_path, content, "bad.json")

    with pytest.raises(ScriptError) as caught:
        ScriptedModel.from_file(path)

    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(f"model script {path}: ")
    assert problem in caught.value.problem
    assert caught.value.source == str(path)


def test_a_missing_script_file_raises_a_script_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"

    with pytest.raises(ScriptError, match=r"nope\.json: cannot read it \(No such file"):
        ScriptedModel.from_file(missing)


async def test_reply_text_is_streamed_in_fragments(tmp_path: Path) -> None:
    model = ScriptedModel.from_file(write(tmp_path, [{"text": "Hello there"}, {"text": ""}]))
    seen: list[str] = []

    reply = await model.complete(REQUEST, on_delta=seen.append)
    await model.complete(REQUEST, on_delta=seen.append)

    assert "".join(seen) == reply.text == "Hello there"
    assert len(seen) == 3


def test_it_is_named_scripted() -> None:
    assert ScriptedModel([]).name == "scripted"
