from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.protocol import (
    MAX_SAFE_INTEGER,
    CreateChange,
    DeleteChange,
    DispatchChange,
    ProtocolError,
    ReminderRecord,
    create_data,
    decode_change,
    delete_data,
    dispatch_data,
)

RECORD: dict[str, Any] = {
    "id": "rem-1",
    "kind": "after",
    "prompt": "stretch",
    "afterSeconds": 10,
    "scheduledAt": "2026-01-01T00:00:10.000Z",
}


def create(**record: Any) -> dict[str, Any]:
    return {"version": 1, "change": "create", "record": {**RECORD, **record}}


def without(data: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in data.items() if name != key}


def test_the_three_changes_decode_to_their_records() -> None:
    decoded = decode_change(create())
    assert isinstance(decoded, CreateChange)
    assert decoded.record.id == "rem-1"
    assert decoded.record.after_seconds == 10
    assert decoded.record.due_ms == 1_767_225_610_000
    assert isinstance(
        decode_change({"version": 1, "change": "delete", "id": "rem-1"}), DeleteChange
    )
    assert isinstance(
        decode_change({"version": 1, "change": "dispatch", "id": "rem-2"}), DispatchChange
    )


def test_encoding_is_exactly_the_public_shape_and_decodes_back() -> None:
    record = ReminderRecord.model_validate(RECORD)
    assert create_data(record) == create()
    assert delete_data(record.id) == {"version": 1, "change": "delete", "id": "rem-1"}
    assert dispatch_data(record.id) == {"version": 1, "change": "dispatch", "id": "rem-1"}
    decoded = decode_change(create_data(record))
    assert isinstance(decoded, CreateChange)
    assert decoded.record == record


def test_records_are_immutable() -> None:
    record = ReminderRecord.model_validate(RECORD)
    with pytest.raises(ValueError, match="frozen"):
        record.prompt = "other"


def reject(data: Any, reason: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_change(data)
    assert reason in caught.value.reason, caught.value.reason
    assert str(caught.value) == caught.value.reason


@pytest.mark.parametrize("version", [0, 2, True, 1.0, "1", None])
def test_any_version_but_the_integer_1_is_rejected(version: Any) -> None:
    reject({**create(), "version": version}, "version")
    reject({"version": version, "change": "delete", "id": "rem-1"}, "version")


@pytest.mark.parametrize("change", ["update", "Create", "", 1, None])
def test_an_unknown_change_is_rejected(change: Any) -> None:
    reject({"version": 1, "change": change, "id": "rem-1"}, "data")


@pytest.mark.parametrize("data", [None, [], "create", 1, True])
def test_a_payload_that_is_not_an_object_is_rejected(data: Any) -> None:
    reject(data, "data:")


def test_extra_fields_are_rejected_at_every_level() -> None:
    reject({**create(), "note": 1}, "note: Extra inputs are not permitted")
    reject(create(timeZone="UTC"), "record.timeZone: Extra inputs are not permitted")
    reject({"version": 1, "change": "delete", "id": "rem-1", "why": "x"}, "why")
    reject({"version": 1, "change": "dispatch", "id": "rem-1", "record": RECORD}, "record")


@pytest.mark.parametrize("key", ["id", "kind", "prompt", "afterSeconds", "scheduledAt"])
def test_a_missing_record_field_is_rejected(key: str) -> None:
    data = create()
    data["record"] = without(data["record"], key)
    reject(data, f"record.{key}: Field required")


def test_missing_top_level_fields_are_rejected() -> None:
    reject(without(create(), "version"), "version: Field required")
    reject(without(create(), "record"), "record: Field required")
    reject(without(create(), "change"), "discriminator")
    reject({"version": 1, "change": "dispatch"}, "id: Field required")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", 1),
        ("kind", "at"),
        ("kind", "every"),
        ("prompt", 5),
        ("prompt", None),
        ("afterSeconds", True),
        ("afterSeconds", 10.0),
        ("afterSeconds", "10"),
        ("scheduledAt", 1_767_225_610_000),
    ],
)
def test_wrong_types_are_rejected(field: str, value: Any) -> None:
    reject(create(**{field: value}), f"record.{field}")


def test_ids_of_delete_and_dispatch_must_be_strings() -> None:
    reject({"version": 1, "change": "delete", "id": 1}, "id")
    reject({"version": 1, "change": "dispatch", "id": None}, "id")


@pytest.mark.parametrize("prompt", ["", " ", " stretch", "stretch ", "stretch\n", "\tstretch"])
def test_empty_or_untrimmed_prompts_are_rejected(prompt: str) -> None:
    reject(create(prompt=prompt), "record.prompt")


def test_prompts_keep_inner_whitespace_and_any_characters() -> None:
    decoded = decode_change(create(prompt='a  "b"\n</script> 伸展 🧘'))
    assert isinstance(decoded, CreateChange)
    assert decoded.record.prompt == 'a  "b"\n</script> 伸展 🧘'


@pytest.mark.parametrize("seconds", [0, -1, MAX_SAFE_INTEGER + 1, 2**64])
def test_non_positive_or_unsafe_seconds_are_rejected(seconds: int) -> None:
    reject(create(afterSeconds=seconds), "record.afterSeconds")


def test_the_largest_safe_seconds_decode() -> None:
    decoded = decode_change(create(afterSeconds=MAX_SAFE_INTEGER))
    assert isinstance(decoded, CreateChange)
    assert decoded.record.after_seconds == MAX_SAFE_INTEGER


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-01T00:00:10Z",
        "2026-01-01T00:00:10.000+01:00",
        "2026-02-30T00:00:10.000Z",
        "10000-01-01T00:00:00.000Z",
        "tomorrow",
        "",
    ],
)
def test_bad_timestamps_are_rejected(text: str) -> None:
    reject(create(scheduledAt=text), "record.scheduledAt")


@pytest.mark.parametrize("bad", ["rem-0", "rem-01", "r-1", "rem-1 ", "", "rem-x"])
def test_bad_ids_are_rejected_in_every_change(bad: str) -> None:
    reject(create(id=bad), "record.id")
    reject({"version": 1, "change": "delete", "id": bad}, "id")
    reject({"version": 1, "change": "dispatch", "id": bad}, "id")
