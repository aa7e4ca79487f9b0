from __future__ import annotations

from typing import Any

import pytest

from dsh_tool_schedule.protocol import (
    MAX_SAFE_INTEGER,
    AfterRule,
    CronRule,
    EveryRule,
    ProtocolError,
    Record,
    V1Create,
    V1Delete,
    V1Dispatch,
    V2Create,
    V2Delete,
    V2Dispatch,
    V2Update,
    create_data,
    decode_change,
    delete_data,
    dispatch_data,
    update_data,
)

from .logs import record

V1_RECORD: dict[str, Any] = {
    "id": "rem-1",
    "kind": "after",
    "prompt": "stretch",
    "afterSeconds": 10,
    "scheduledAt": "2026-01-01T00:00:10.000Z",
}
RECORD = record()
EVERY = record(rule={"kind": "every", "seconds": 7200, "at": "2026-01-01T09:00"}, count=3)
CRON = record(rule={"kind": "cron", "cron": "0 9 * * MON-FRI"}, zone="Europe/Berlin")


def v1_create(**fields: Any) -> dict[str, Any]:
    return {"version": 1, "change": "create", "record": {**V1_RECORD, **fields}}


def v2(change: str, data: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"version": 2, "change": change}
    if data is not None:
        body["record"] = data
    return {**body, **fields}


def with_(data: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**data, **fields}


def without(data: dict[str, Any], key: str) -> dict[str, Any]:
    return {name: value for name, value in data.items() if name != key}


def reject(data: Any, reason: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_change(data)
    assert reason in caught.value.reason, caught.value.reason
    assert str(caught.value) == caught.value.reason


# -- protocol v1: still read ---------------------------------------------------------


def test_v1_changes_decode_to_their_models() -> None:
    decoded = decode_change(v1_create())
    assert isinstance(decoded, V1Create)
    assert decoded.record.after_seconds == 10
    assert decoded.record.due_ms == 1_767_225_610_000
    assert decoded.record.to_data() == V1_RECORD
    assert isinstance(decode_change({"version": 1, "change": "delete", "id": "rem-1"}), V1Delete)
    assert isinstance(
        decode_change({"version": 1, "change": "dispatch", "id": "rem-2"}), V1Dispatch
    )


def test_v1_has_no_update_and_no_v2_fields() -> None:
    reject({"version": 1, "change": "update", "record": V1_RECORD}, "data")
    reject(v1_create(timeZone="UTC"), "record.timeZone: Extra inputs are not permitted")
    reject({"version": 1, "change": "dispatch", "id": "rem-1", "missed": 0}, "missed")
    reject(v1_create(kind="every"), "record.kind")


@pytest.mark.parametrize("key", ["id", "kind", "prompt", "afterSeconds", "scheduledAt"])
def test_a_missing_v1_record_field_is_rejected(key: str) -> None:
    data = v1_create()
    data["record"] = without(data["record"], key)
    reject(data, f"record.{key}: Field required")


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("afterSeconds", True),
        ("afterSeconds", 10.0),
        ("afterSeconds", 0),
        ("afterSeconds", MAX_SAFE_INTEGER + 1),
        ("scheduledAt", "2026-01-01T00:00:10Z"),
        ("prompt", " stretch"),
        ("id", "rem-01"),
    ],
)
def test_wrong_v1_values_are_rejected(field: str, value: Any) -> None:
    reject(v1_create(**{field: value}), f"record.{field}")


# -- the version -----------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 3, True, 1.0, 2.0, "2", None])
def test_any_version_but_the_integers_1_and_2_is_rejected(version: Any) -> None:
    reject({**v2("create", RECORD), "version": version}, "version: expected the integer 1 or 2")


def test_a_missing_version_is_named() -> None:
    reject(without(v2("create", RECORD), "version"), "version: field required")


@pytest.mark.parametrize("data", [None, [], "create", 1, True])
def test_a_payload_that_is_not_an_object_is_rejected(data: Any) -> None:
    reject(data, "data: expected a JSON object")


# -- protocol v2 -------------------------------------------------------------------------


def test_the_four_v2_changes_decode_and_encode_back_exactly() -> None:
    for data, model in (
        (RECORD, AfterRule),
        (EVERY, EveryRule),
        (CRON, CronRule),
    ):
        created = decode_change(v2("create", data))
        assert isinstance(created, V2Create)
        assert isinstance(created.record.rule, model)
        assert create_data(created.record) == v2("create", data)
        updated = decode_change(v2("update", with_(data, revision=2)))
        assert isinstance(updated, V2Update)
        assert update_data(updated.record) == v2("update", with_(data, revision=2))
    deleted = decode_change(v2("delete", id="rem-1"))
    assert isinstance(deleted, V2Delete)
    assert delete_data(deleted.id) == v2("delete", id="rem-1")
    dispatch = v2(
        "dispatch", id="rem-1", occurrenceAt="2026-01-01T00:00:10.000Z", missed=2, recordSeq=0
    )
    decoded = decode_change(dispatch)
    assert isinstance(decoded, V2Dispatch)
    assert decoded.occurrence_ms == 1_767_225_610_000
    assert dispatch_data(decoded.id, decoded.occurrence_at, 2, 0) == dispatch


def test_a_record_knows_its_times_and_whether_it_recurs() -> None:
    once = Record.model_validate(RECORD)
    assert (once.recurring, once.first_ms, once.next_ms, once.until_ms) == (
        False,
        1_767_225_610_000,
        1_767_225_610_000,
        None,
    )
    bounded = Record.model_validate(with_(EVERY, until="2026-01-02T00:00:00.000Z"))
    assert bounded.recurring
    assert bounded.until_ms == 1_767_312_000_000


def test_until_and_count_round_trip() -> None:
    data = with_(EVERY, until="2026-01-02T00:00:00.000Z")
    decoded = decode_change(v2("create", data))
    assert isinstance(decoded, V2Create)
    assert create_data(decoded.record) == v2("create", data)


def test_a_record_that_is_not_an_object_is_rejected() -> None:
    reject(v2("create", 5), "record")  # type: ignore[arg-type]
    reject(v2("create", with_(RECORD, rule=[])), "rule")


def test_records_are_immutable() -> None:
    decoded = Record.model_validate(RECORD)
    with pytest.raises(ValueError, match="frozen"):
        decoded.prompt = "other"


def test_a_create_is_revision_1() -> None:
    reject(v2("create", with_(RECORD, revision=2)), "a create has revision 1, not 2")


@pytest.mark.parametrize(
    "key",
    ["id", "prompt", "rule", "timeZone", "firstAt", "nextAt", "misfire", "paused", "revision"],
)
def test_a_missing_v2_record_field_is_rejected(key: str) -> None:
    reject(v2("create", without(RECORD, key)), f"record.{key}: Field required")


def test_optional_keys_are_absent_never_null() -> None:
    reject(v2("create", with_(EVERY, until=None)), "until: omit the key instead of writing null")
    reject(v2("create", with_(EVERY, count=None)), "count: omit the key instead of writing null")
    every = with_(EVERY, rule={"kind": "every", "seconds": 60, "at": None})
    reject(v2("create", every), "at: omit the key instead of writing null")


def test_one_shots_have_no_until_or_count() -> None:
    reject(v2("create", with_(RECORD, count=2)), "a one-shot 'after' rule has no until or count")
    at = with_(RECORD, rule={"kind": "at", "at": "2026-01-01T09:00"})
    reject(v2("create", with_(at, until="2026-01-02T00:00:00.000Z")), "one-shot 'at' rule")


@pytest.mark.parametrize(
    ("rule", "where"),
    [
        ({"kind": "after", "seconds": 0}, "rule.after.seconds"),
        ({"kind": "after", "seconds": True}, "rule.after.seconds"),
        ({"kind": "at", "at": "tomorrow"}, "rule.at.at"),
        ({"kind": "at", "at": "2026-01-01 09:00"}, "rule.at.at"),
        ({"kind": "every", "seconds": 10.0}, "rule.every.seconds"),
        ({"kind": "every", "seconds": 60, "cron": "x"}, "rule.every.cron"),
        ({"kind": "cron", "cron": "0 9 * *"}, "rule.cron.cron"),
        ({"kind": "cron", "cron": "0  9 * * *"}, "single spaces"),
        ({"kind": "cron", "cron": "0 25 * * *"}, "Bad hour"),
        ({"kind": "weekly"}, "rule"),
        ({"seconds": 10}, "rule"),
    ],
)
def test_bad_rules_are_rejected_naming_the_field(rule: dict[str, Any], where: str) -> None:
    reject(v2("create", with_(RECORD, rule=rule)), where)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", "rem-0"),
        ("prompt", ""),
        ("prompt", "x "),
        ("timeZone", "Mars/Olympus"),
        ("timeZone", "../etc"),
        ("firstAt", "2026-01-01T00:00:10Z"),
        ("nextAt", 5),
        ("misfire", "never"),
        ("paused", 0),
        ("revision", 0),
        ("revision", True),
        ("count", 0),
        ("until", "soon"),
        ("note", "x"),
    ],
)
def test_wrong_v2_record_values_are_rejected(field: str, value: Any) -> None:
    reject(v2("create", with_(EVERY, **{field: value})), f"record.{field}")


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"occurrenceAt": "now"}, "occurrenceAt"),
        ({"missed": -1}, "missed"),
        ({"missed": 1.0}, "missed"),
        ({"recordSeq": -1}, "recordSeq"),
        ({"recordSeq": "0"}, "recordSeq"),
        ({"id": "x"}, "id"),
        ({"extra": 1}, "extra"),
    ],
)
def test_wrong_dispatch_fields_are_rejected(fields: dict[str, Any], where: str) -> None:
    dispatch = v2(
        "dispatch", id="rem-1", occurrenceAt="2026-01-01T00:00:10.000Z", missed=0, recordSeq=0
    )
    reject({**dispatch, **fields}, where)
    reject(without(dispatch, "recordSeq"), "recordSeq: Field required")


def test_an_unknown_v2_change_is_rejected() -> None:
    reject(v2("pause", id="rem-1"), "data")
    reject(v2("delete"), "id: Field required")
