"""`JsonLike`: what plugins may hand back where the host needs JSON, and `to_json` to check it.

pydantic's `JsonValue` is exact (`dict[str, JsonValue]`), and `dict` is
invariant, so a tool returning a `dict[str, str]` would not type-check
against it. `JsonLike` is the covariant spelling plugins write against:
any `Mapping` with string keys, any `list` or `tuple`, strings, numbers,
booleans and None, nested. `to_json(value)` turns such a value into plain
JSON data (dicts and lists) and raises `ValueError` naming the first place
that is not JSON (a set, a NaN, a non-string key, an object) or nests
deeper than the host stores (`dsh.base.limits.MAX_DEPTH`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeAlias

from pydantic import JsonValue

from .limits import MAX_DEPTH

__all__ = ["JsonLike", "to_json"]

JsonLike: TypeAlias = (
    "Mapping[str, JsonLike] | Sequence[JsonLike] | str | int | float | bool | None"
)
"""A JSON value as plugins write it: any Mapping with str keys, any sequence, scalars."""


def to_json(value: object, what: str = "value") -> JsonValue:
    """`value` as plain JSON data; `ValueError` naming where it is not JSON.

    `what` names the root in the message (`"result.items[2]: a set is not JSON"`).
    """
    return _convert(value, what, 0)


def _convert(value: object, where: str, depth: int) -> JsonValue:
    if depth > MAX_DEPTH:
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels deep")
    if value is None:
        return None
    # Subclasses (a StrEnum, an IntEnum) become the plain value they stand for.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: {value!r} is not a JSON number")
        return float(value)
    if isinstance(value, Mapping):
        data: dict[str, JsonValue] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: key {key!r} is not a string")
            data[key] = _convert(item, f"{where}.{key}", depth + 1)
        return data
    if isinstance(value, list | tuple):
        return [_convert(item, f"{where}[{index}]", depth + 1) for index, item in enumerate(value)]
    raise ValueError(f"{where}: {type(value).__name__} is not JSON")
