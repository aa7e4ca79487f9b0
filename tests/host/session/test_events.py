from __future__ import annotations

from typing import Any

import pytest
from pydantic import JsonValue, ValidationError

from dsh.session.errors import PayloadError
from dsh.session.event import SessionEvent
from dsh.session.events import (
    HOST_EVENT_TYPES,
    AssistantMessage,
    EndSeed,
    ErrorInfo,
    SessionTitle,
    Source,
    ToolCallRecord,
    ToolResult,
    TurnEnd,
    UserMessage,
    decode,
    validate_time_zone,
)


def stored(type: str, data: JsonValue, seq: int = 3) -> SessionEvent:
    return SessionEvent(seq=seq, type=type, time=0, data=data)


@pytest.mark.parametrize(
    ("type", "data"),
    [
        ("message/user", {"text": "hi", "source": {"kind": "user"}}),
        ("message/user", {"text": "hi", "source": {"kind": "user"}, "timeZone": "Asia/Kolkata"}),
        ("message/user", {"text": "due", "source": {"kind": "schedule", "scheduleId": "rem-1"}}),
        ("message/assistant", {"text": "", "toolCalls": []}),
        (
            "message/assistant",
            {
                "text": "ok",
                "toolCalls": [{"id": "c1", "name": "t", "arguments": {"a": [1, None]}}],
                "reasoning": "first…",
            },
        ),
        (
            "message/assistant",
            {"text": "", "toolCalls": [{"id": "c", "name": "t", "arguments": "{"}]},
        ),
        ("tool/result", {"callId": "c1", "name": "t", "value": None}),
        ("tool/result", {"callId": "c1", "name": "t", "error": {"code": "x", "message": "m"}}),
        ("turn/end", {"status": "ok"}),
        ("turn/end", {"status": "error", "error": {"code": "model_unavailable", "message": "m"}}),
        ("session/end-seed", {}),
        ("session/title", {"title": "Trip to Kyoto"}),
    ],
)
def test_every_host_payload_round_trips_to_the_same_data(type: str, data: JsonValue) -> None:
    assert decode(stored(type, data)).data() == data


@pytest.mark.parametrize(
    ("type", "data", "problem"),
    [
        ("message/user", "text", "data: expected a JSON object"),
        ("message/user", {"text": "hi"}, "source: Field required"),
        ("message/user", {"text": "hi", "source": {"kind": ""}}, "source.kind"),
        ("message/user", {"text": 1, "source": {"kind": "user"}}, "text"),
        ("message/user", {"text": "hi", "source": {"kind": "user"}, "timeZone": None}, "timeZone"),
        ("message/user", {"text": "", "source": {"kind": "u"}, "timeZone": "../etc"}, "timeZone"),
        ("message/user", {"text": "", "source": {"kind": "u"}, "extra": 1}, "extra"),
        ("message/assistant", {"text": "", "tool_calls": []}, "toolCalls: Field required"),
        ("message/assistant", {"text": "", "toolCalls": [{"id": "c"}]}, "toolCalls.0.name"),
        ("message/assistant", {"text": "", "toolCalls": [], "reasoning": 5}, "reasoning"),
        ("tool/result", {"callId": "c", "name": "t"}, "exactly one of 'value' and 'error'"),
        (
            "tool/result",
            {"callId": "c", "name": "t", "value": 1, "error": {"code": "x", "message": ""}},
            "exactly one",
        ),
        ("turn/end", {"status": "error"}, "'error' is present exactly when"),
        ("turn/end", {"status": "ok", "error": {"code": "x", "message": ""}}, "exactly when"),
        ("turn/end", {"status": "done"}, "status"),
        ("session/end-seed", {"x": 1}, "x"),
        ("session/title", {"title": " padded "}, "whitespace"),
        ("session/title", {"title": ""}, "title"),
        ("session/title", {"title": "x" * 201}, "title"),
    ],
)
def test_a_payload_of_the_wrong_shape_is_an_error_naming_the_event_and_problem(
    type: str, data: JsonValue, problem: str
) -> None:
    with pytest.raises(PayloadError) as caught:
        decode(stored(type, data, seq=7))
    assert str(caught.value).startswith(f"event 7 ({type}): ")
    assert problem in caught.value.reason
    assert (caught.value.seq, caught.value.type) == (7, type)


def test_only_host_types_decode() -> None:
    assert set(HOST_EVENT_TYPES) == {
        "message/user",
        "message/assistant",
        "tool/result",
        "turn/end",
        "session/end-seed",
        "session/title",
    }
    with pytest.raises(KeyError):
        decode(stored("schedule/change", {}))


def test_payloads_are_built_in_python_with_their_public_names() -> None:
    message = UserMessage(text="hi", source=Source(kind="schedule", scheduleId="rem-2"))
    assert message.data() == {"text": "hi", "source": {"kind": "schedule", "scheduleId": "rem-2"}}
    assert not message.from_user
    answer = AssistantMessage(
        text="", toolCalls=(ToolCallRecord(id="c", name="t", arguments={}),), reasoning="r"
    )
    assert answer.data()["reasoning"] == "r"
    assert ToolResult(callId="c", name="t", value=None).ok
    failed = ToolResult(callId="c", name="t", error=ErrorInfo(code="x", message="m"))
    assert not failed.ok
    assert TurnEnd(status="ok").data() == {"status": "ok"}
    assert EndSeed().data() == {}
    assert SessionTitle(title="t").data() == {"title": "t"}


def test_python_field_names_are_not_an_alternative_spelling_of_the_stored_keys() -> None:
    with pytest.raises(ValidationError):
        AssistantMessage.model_validate({"text": "", "tool_calls": []})


def test_payloads_are_frozen() -> None:
    message: Any = UserMessage(text="hi", source=Source(kind="user"))
    with pytest.raises(ValidationError):
        message.text = "changed"


@pytest.mark.parametrize("zone", ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires"])
def test_known_time_zones_are_accepted(zone: str) -> None:
    assert validate_time_zone(zone) == zone


@pytest.mark.parametrize(
    "zone",
    [
        "Mars/Olympus",
        "../../etc/passwd",
        "../etc",
        "/etc/localtime",
        "",
        "a" * 65,
        "Europe/Berlin/" + "x" * 1000,
        "Europe/",
        "UTC/",
        "Europe\x00Berlin",
        "Europe",  # a folder of the zone database, not a zone
        "America",
        "US",
        "Etc",
    ],
)
def test_unknown_or_path_like_time_zones_are_refused_naming_them(zone: str) -> None:
    with pytest.raises(ValueError, match="time zone") as refused:
        validate_time_zone(zone)
    assert "/usr/" not in str(refused.value) and "zoneinfo" not in str(refused.value)
