"""The plain check answers only for payloads the models accept, and then as they do."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_tool_schedule.cron_cache import CronCache
from dsh_tool_schedule.fold import _plain_of
from dsh_tool_schedule.protocol import ProtocolError, decode_change
from dsh_tool_schedule.protocol.plain import PlainDispatch, PlainRecord, plain_change

from .conftest import START_MS
from .logs import (
    create,
    create2,
    cron,
    delete,
    delete2,
    dispatch,
    dispatch2,
    every,
    record,
    update2,
)

Data = dict[str, Any]


def agrees(data: object) -> str:
    """Assert the plain check agrees with the models on `data`; say what happened."""
    plain = plain_change(data, CronCache())
    try:
        decoded = decode_change(data)  # type: ignore[arg-type]
    except ProtocolError:
        assert plain is None, data
        return "rejected"
    if plain is None:
        return "unsure"
    assert plain == _plain_of(decoded)
    return "plain"


VALID: list[object] = [
    create("rem-1")[1],
    delete("rem-2")[1],
    dispatch("rem-3")[1],
    create2(record())[1],
    create2(record(rule={"kind": "at", "at": "2026-01-02T09:00"}, zone="Europe/Berlin"))[1],
    create2(every(60, until_ms=START_MS + 3_600_000, count=3, misfire="skip"))[1],
    create2({**every(60), "rule": {"kind": "every", "seconds": 60, "at": "2026-01-01T00:01"}})[1],
    create2(cron("0 9 * * 1-5", START_MS + 9 * 3_600_000, zone="Europe/Berlin"))[1],
    update2(every(60, revision=2, paused=True, next_ms=START_MS + 120_000))[1],
    delete2("rem-1")[1],
    dispatch2("rem-1", START_MS + 60_000, 0, missed=2)[1],
]


@pytest.mark.parametrize("data", VALID)
def test_valid_payloads_are_read_plainly_and_as_the_models_read_them(data: object) -> None:
    assert agrees(data) == "plain"


def _mutated(base: object, path: tuple[str, ...], value: object) -> object:
    data = copy.deepcopy(base)
    target = data
    for key in path[:-1]:
        target = target[key]  # type: ignore[index]
    if value is _DROP:
        del target[path[-1]]  # type: ignore[attr-defined]
    else:
        target[path[-1]] = value  # type: ignore[index]
    return data


_DROP = object()
V1_CREATE, V1_DELETE, V1_DISPATCH = VALID[0], VALID[1], VALID[2]
V2_CREATE, V2_EVERY, V2_CRON, V2_DISPATCH = VALID[3], VALID[5], VALID[7], VALID[10]

NOT_PLAIN: list[tuple[object, tuple[str, ...], object]] = [
    (V1_CREATE, ("version",), True),
    (V1_CREATE, ("change",), 1),
    (V1_CREATE, ("version",), 3),
    (V1_CREATE, ("change",), "update"),
    (V1_CREATE, ("extra",), 1),
    (V1_CREATE, ("record",), "x"),
    (V1_CREATE, ("record", "extra"), 1),
    (V1_CREATE, ("record", "id"), "rem-01"),
    (V1_CREATE, ("record", "id"), 7),
    (V1_CREATE, ("record", "id"), f"rem-{2**53}"),
    (V1_CREATE, ("record", "kind"), "at"),
    (V1_CREATE, ("record", "prompt"), " padded"),
    (V1_CREATE, ("record", "prompt"), ""),
    (V1_CREATE, ("record", "afterSeconds"), True),
    (V1_CREATE, ("record", "afterSeconds"), 0),
    (V1_CREATE, ("record", "scheduledAt"), 5),
    (V1_CREATE, ("record", "scheduledAt"), "2026-02-30T00:00:00.000Z"),
    (V1_DELETE, ("id",), "nope"),
    (V1_DELETE, ("extra",), 1),
    (V1_DISPATCH, ("id",), None),
    (V2_DISPATCH, ("extra",), 1),
    (V2_DISPATCH, ("id",), "x"),
    (V2_DISPATCH, ("occurrenceAt",), 1),
    (V2_DISPATCH, ("occurrenceAt",), "2026-01-01T00:00:00Z"),
    (V2_DISPATCH, ("missed",), -1),
    (V2_DISPATCH, ("recordSeq",), 1.0),
    (V2_DISPATCH, ("change",), "nope"),
    (VALID[9], ("id",), "x"),
    (VALID[9], ("extra",), 1),
    (V2_CREATE, ("extra",), 1),
    (V2_CREATE, ("record",), []),
    (V2_CREATE, ("record", "revision"), 2),
    (V2_CREATE, ("record", "revision"), True),
    (V2_CREATE, ("record", "extra"), 1),
    (V2_CREATE, ("record", "misfire"), _DROP),
    (V2_CREATE, ("record", "id"), "rem-0"),
    (V2_CREATE, ("record", "prompt"), "tab\t"),
    (V2_CREATE, ("record", "timeZone"), 1),
    (V2_CREATE, ("record", "timeZone"), "Mars/Olympus"),
    (V2_CREATE, ("record", "misfire"), "never"),
    (V2_CREATE, ("record", "misfire"), 1),
    (V2_CREATE, ("record", "paused"), 0),
    (V2_CREATE, ("record", "firstAt"), None),
    (V2_CREATE, ("record", "nextAt"), None),
    (V2_CREATE, ("record", "nextAt"), "2026-13-01T00:00:00.000Z"),
    (V2_CREATE, ("record", "count"), 2),
    (V2_CREATE, ("record", "until"), "2026-01-02T00:00:00.000Z"),
    (V2_CREATE, ("record", "rule"), "after"),
    (V2_CREATE, ("record", "rule", "kind"), "weekly"),
    (V2_CREATE, ("record", "rule", "kind"), 1),
    (V2_CREATE, ("record", "rule", "extra"), 1),
    (V2_CREATE, ("record", "rule", "seconds"), _DROP),
    (V2_CREATE, ("record", "rule", "seconds"), 0),
    (V2_EVERY, ("record", "until"), None),
    (V2_EVERY, ("record", "until"), 5),
    (V2_EVERY, ("record", "until"), "soon"),
    (V2_EVERY, ("record", "count"), None),
    (V2_EVERY, ("record", "count"), 0),
    (V2_EVERY, ("record", "rule", "at"), None),
    (V2_EVERY, ("record", "rule", "at"), "9am"),
    (V2_CRON, ("record", "rule", "cron"), 9),
    (V2_CRON, ("record", "rule", "cron"), "0  9 * * 1-5"),
    (V2_CRON, ("record", "rule", "cron"), "61 9 * * *"),
    (V2_CRON, ("record", "rule", "cron"), "0 9 * *"),
]


@pytest.mark.parametrize(("base", "path", "value"), NOT_PLAIN)
def test_anything_else_is_left_to_the_models(
    base: object, path: tuple[str, ...], value: object
) -> None:
    data = _mutated(base, path, value)
    assert plain_change(data, CronCache()) is None
    assert agrees(data) in ("rejected", "unsure")


def test_non_objects_and_unknown_versions_are_left_to_the_models() -> None:
    for data in ([], "x", None, {"change": "delete", "id": "rem-1"}, {"version": 3}):
        assert plain_change(data, CronCache()) is None
        assert agrees(data) == "rejected"


def test_a_v1_create_reads_as_the_v2_record_it_stands_for() -> None:
    plain = plain_change(V1_CREATE, CronCache())
    assert isinstance(plain, PlainRecord) and plain.v1 and not plain.recurring
    assert plain.data["rule"] == {"kind": "after", "seconds": 10}
    assert plain.next_ms == plain.first_ms == START_MS + 10_000
    assert plain_change(V1_DISPATCH, CronCache()) == PlainDispatch("rem-3")  # type: ignore[arg-type]


def test_a_cron_text_is_parsed_once_per_cache() -> None:
    crons = CronCache()
    assert plain_change(V2_CRON, crons) is not None
    parsed = crons.parse("0 9 * * 1-5")
    assert len(crons) == 1
    assert plain_change(V2_CRON, crons) is not None
    assert crons.parse("0 9 * * 1-5") is parsed


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2**54),
    st.floats(allow_nan=False),
    st.sampled_from(["", " x", "rem-1", "rem-00", "UTC", "2026-01-01T00:00:00.000Z", "latest"]),
    st.lists(st.integers(), max_size=1),
)


def _paths(data: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            found.append((*prefix, key))
            found.extend(_paths(value, (*prefix, key)))
        found.append((*prefix, "extra"))
    return found


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_payload_with_one_field_changed_is_read_as_the_models_read_it(
    data: st.DataObject,
) -> None:
    base = data.draw(st.sampled_from(VALID))
    path = data.draw(st.sampled_from(_paths(base)))
    value = data.draw(st.one_of(st.just(_DROP), ODD))
    if value is _DROP and path[-1] == "extra":
        value = 1
    agrees(_mutated(base, path, value))
