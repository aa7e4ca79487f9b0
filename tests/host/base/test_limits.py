from __future__ import annotations

from typing import Any

import pytest

from dsh.base.errors import LimitExceeded
from dsh.base.limits import (
    MAX_DEPTH,
    MAX_EVENT_DEPTH,
    MAX_TEXT_BYTES,
    check_depth,
    check_text,
    depth_of,
)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for index in range(depth):
        value = [value] if index % 2 else {"k": value}
    return value


def test_depth_counts_containers_and_stops_early() -> None:
    assert depth_of(1) == 0
    assert depth_of([]) == 1
    assert depth_of({"a": [1, {"b": (2,)}]}) == 4
    assert depth_of(nested(500), stop=10) == 11


def test_check_depth_names_what_and_the_limit() -> None:
    check_depth(nested(MAX_DEPTH), "arguments")
    with pytest.raises(LimitExceeded, match=f"arguments: nested more than {MAX_DEPTH} levels"):
        check_depth(nested(MAX_DEPTH + 1), "arguments")
    assert MAX_EVENT_DEPTH == MAX_DEPTH + 3


def test_check_text_counts_utf8_bytes() -> None:
    check_text("x" * MAX_TEXT_BYTES, "text")
    check_text("é" * (MAX_TEXT_BYTES // 2), "text")
    with pytest.raises(LimitExceeded, match=f"text: longer than the limit of {MAX_TEXT_BYTES:,}"):
        check_text("é" * (MAX_TEXT_BYTES // 2 + 1), "text")
    with pytest.raises(LimitExceeded):
        check_text("x" * 11, "short", limit=10)
