from __future__ import annotations

import json
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from pydantic_core import to_json

from dsh.base.errors import LimitExceeded, NotJson
from dsh.base.jsonbytes import decode, encode, explain, finite_bytes, parse_object
from tests.support import strategies

json_values = strategies.json_values(max_leaves=30)


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def enc(value: object, depth: int = 8, size: int = 1 << 20) -> bytes:
    return encode(value, max_depth=depth, max_bytes=size)


@given(json_values)
def test_encode_gives_pydantic_s_canonical_bytes_and_decode_gives_the_value_back(
    value: Any,
) -> None:
    raw = enc(value, depth=100)
    assert raw == to_json(value)
    assert decode(raw) == value
    assert finite_bytes(parse_object(raw)) == raw


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (float("nan"), "data: nan is not a JSON number"),
        ({"a": [1, float("inf")]}, "data.a[1]: inf is not a JSON number"),
        ({"a": (1, 2)}, "data.a: tuple is not JSON"),
        ([{1, 2}], "data[0]: set is not JSON"),
        ({1: "x"}, "data: key 1 is not a string"),
        (b"bytes", "data: bytes is not JSON"),
        ({"o": object()}, "data.o: object is not JSON"),
    ],
)
def test_what_is_not_plain_finite_json_is_refused_naming_the_place(
    value: object, problem: str
) -> None:
    with pytest.raises(NotJson) as info:
        enc(value)
    assert str(info.value) == problem


def test_a_value_that_contains_itself_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(LimitExceeded, match="nested more than 8 levels deep"):
        enc(loop)
    assert "contains itself" in (explain(loop) or "")


def test_subclasses_become_the_plain_value_they_stand_for() -> None:
    class Level(IntEnum):
        HIGH = 3

    assert enc({"level": Level.HIGH}) == b'{"level":3}'


def test_depth_and_size_limits_name_the_limit() -> None:
    assert enc(nested(8)) == b"[" * 8 + b"0" + b"]" * 8
    with pytest.raises(LimitExceeded, match="nested more than 8 levels deep"):
        enc(nested(9))
    # Brackets inside strings are not nesting: the exact count clears them.
    assert enc(["[" * 20]) == b'["' + b"[" * 20 + b'"]'
    with pytest.raises(LimitExceeded, match="10 bytes, more than the limit of 9"):
        enc("x" * 8, size=9)
    with pytest.raises(LimitExceeded, match="nested more than 8 levels deep"):
        enc(nested(300))  # past what the serializer itself can write


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_parse_object_refuses_the_non_standard_constants(text: str) -> None:
    with pytest.raises(ValueError, match="is not a JSON number"):
        parse_object(text)


def test_parse_object_words_syntax_errors_and_reads_past_pydantic_s_depth() -> None:
    with pytest.raises(ValueError, match="Expecting"):
        parse_object('{"a": }')
    deep = "[" * 500 + "]" * 500
    assert parse_object(deep) == json.loads(deep)
    with pytest.raises(ValueError, match="nested too deep to read"):
        parse_object("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError):
        parse_object('"\\ud800"')  # a lone surrogate: only pydantic-core objects to it


def test_decode_reads_values_deeper_than_pydantic_core_reads() -> None:
    raw = to_json(nested(250))
    assert decode(raw) == nested(250)
    with pytest.raises(ValueError):
        decode(b"{")


def test_finite_bytes_refuses_an_overflowed_number_but_not_the_word() -> None:
    with pytest.raises(NotJson, match=r"data\[0\]: inf is not a JSON number"):
        finite_bytes(parse_object("[1e400]"))
    assert finite_bytes(["Infinity and NaN"]) == b'["Infinity and NaN"]'
    with pytest.raises(NotJson, match="nested too deep to write"):
        finite_bytes(nested(300))


def test_explain_finds_nothing_in_plain_json() -> None:
    assert explain({"a": [1, 2.5, None, True, "x"]}) is None
