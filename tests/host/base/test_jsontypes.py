"""`to_json`: what plugins hand back becomes plain JSON data, or a clear error."""

from __future__ import annotations

from enum import IntEnum, StrEnum
from types import MappingProxyType

import pytest

from dsh.base.jsontypes import MAX_DEPTH, to_json


class Colour(StrEnum):
    RED = "red"


class Size(IntEnum):
    BIG = 3


def test_mappings_and_sequences_become_dicts_and_lists() -> None:
    value = MappingProxyType({"a": (1, 2.5, None), "b": [True, {"c": "d"}]})

    assert to_json(value) == {"a": [1, 2.5, None], "b": [True, {"c": "d"}]}


def test_enum_members_become_the_plain_values_they_stand_for() -> None:
    converted = to_json([Colour.RED, Size.BIG, True])

    assert converted == ["red", 3, True]
    assert [type(item) for item in converted] == [str, int, bool]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a": {1, 2}}, "result.a: set is not JSON"),
        ({"a": [1, float("nan")]}, r"result.a\[1\]: nan is not a JSON number"),
        ({1: "one"}, "result: key 1 is not a string"),
        (object(), "result: object is not JSON"),
        (b"bytes", "result: bytes is not JSON"),
    ],
)
def test_what_is_not_json_is_named_where_it_is(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_json(value, "result")


def test_a_value_nested_too_deeply_is_refused() -> None:
    value: list[object] = []
    for _ in range(MAX_DEPTH + 1):
        value = [value]

    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels deep"):
        to_json(value)
