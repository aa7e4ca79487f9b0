"""Canonical JSON bytes: how event data is checked, held and decoded (issue 20).

An event keeps its `data` as the canonical UTF-8 JSON bytes it is written in
(pydantic-core's serializer: no spaces, non-ASCII kept, shortest float
repr — the bytes every edition of the JSONL log holds). Three operations:

- `encode(value)` turns a Python value into those bytes and proves it is
  plain JSON in one pass through C code: serialise, parse the bytes back and
  compare with the original. Anything the serializer would quietly change —
  a tuple or set (becomes a list), a NaN or infinity (becomes `null`), a
  non-string key, bytes, an object — compares unequal, and only then does a
  walk in Python find the first offending place to name it. Depth is checked
  on the bytes (a bracket count bounds it; the exact walk runs only when
  there are more brackets than the limit allows), size is their length.
- `decode(raw)` gives the Python value back (a fresh copy on every call).
- `parse_object(line)` reads foreign JSON text (a stored line) at any depth a
  writer could have produced: pydantic-core's parser stops at 200 levels, so
  deeper text falls back to the standard library's, which the first
  edition's writer (up to 253 levels) stays well inside.

Measured against the alternatives in `bench` (`python -m bench --only codec`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import JsonValue
from pydantic_core import PydanticSerializationError, from_json, to_json

from .errors import LimitExceeded, NotJson
from .limits import depth_of

__all__ = ["NotJson", "decode", "encode", "explain", "finite_bytes", "parse_object"]

_RECURSION_HINT = "recursion limit"
# Deeper than any limit a caller checks: only a value that contains itself gets here.
_EXPLAIN_DEPTH = 1_000


def encode(value: object, *, max_depth: int, max_bytes: int, what: str = "data") -> bytes:
    """The canonical JSON bytes of `value`, or `NotJson` / `LimitExceeded` saying why not."""
    try:
        raw = to_json(value, inf_nan_mode="null")
    except (PydanticSerializationError, ValueError, RecursionError):
        if depth_of(value, max_depth) > max_depth:
            raise LimitExceeded(f"{what}: nested more than {max_depth} levels deep") from None
        raise NotJson(explain(value, what) or f"{what}: cannot be written as JSON") from None
    if len(raw) > max_bytes:
        raise LimitExceeded(f"{what}: {len(raw):,} bytes, more than the limit of {max_bytes:,}")
    if raw.count(b"[") + raw.count(b"{") > max_depth and depth_of(value, max_depth) > max_depth:
        raise LimitExceeded(f"{what}: nested more than {max_depth} levels deep")
    # A container is proven by parsing it back; a scalar by its type.
    plain = decode(raw) == value if raw[:1] in b"[{" else _plain_scalar(value)
    if not plain:
        raise NotJson(explain(value, what) or f"{what}: is not plain JSON")
    return raw


def _plain_scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, bool | int | str)


def decode(raw: bytes) -> JsonValue:
    """The value held as `raw` (canonical bytes this module produced)."""
    try:
        return from_json(raw)  # type: ignore[no-any-return]
    except ValueError as error:
        if _RECURSION_HINT not in str(error):
            raise
        return json.loads(raw)  # type: ignore[no-any-return]


def parse_object(text: str | bytes) -> Any:
    """Parse foreign JSON text at any depth up to Python's own recursion limit.

    `NaN` and `Infinity` are refused; an overflowing number such as `1e400`
    is parsed to an infinity, which `finite_bytes` then refuses. Raises
    `ValueError` naming the problem (the standard library's wording, which
    says where and what, e.g. "NaN is not a JSON number").
    """
    try:
        return from_json(text, allow_inf_nan=False)
    except ValueError as error:
        fast_error = error
    # Deeper than pydantic-core reads, or invalid: the standard library parses
    # the first and words the second best.
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ValueError("nested too deep to read") from None
    except json.JSONDecodeError as error:
        raise ValueError(str(error)) from None
    if _RECURSION_HINT not in str(fast_error):
        raise fast_error  # only pydantic-core objects to it (e.g. a lone surrogate)
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def finite_bytes(value: JsonValue, what: str = "data") -> bytes:
    """The canonical bytes of a value a JSON parser produced, refusing infinities.

    A parser's output is JSON by construction except for numbers that
    overflow a float; they are written as `Infinity`, which a substring test
    finds (a string containing that word only costs a walk to clear it).
    """
    try:
        raw = to_json(value, inf_nan_mode="constants")
    except (PydanticSerializationError, ValueError, RecursionError):
        raise NotJson(f"{what}: nested too deep to write") from None
    if (b"Infinity" in raw or b"NaN" in raw) and (problem := explain(value, what)):
        raise NotJson(problem)
    return raw


def explain(value: object, what: str = "data") -> str | None:
    """The first place where `value` is not plain, finite JSON, or None if it is."""
    pending: list[tuple[object, str, int]] = [(value, what, 0)]
    while pending:
        item, where, depth = pending.pop()
        if item is None or isinstance(item, bool | int | str):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{where}: {item!r} is not a JSON number"
            continue
        if depth > _EXPLAIN_DEPTH:
            return f"{where}: nested too deep (or it contains itself)"
        if isinstance(item, dict):
            for key, child in reversed(item.items()):
                if not isinstance(key, str):
                    return f"{where}: key {key!r} is not a string"
                pending.append((child, f"{where}.{key}", depth + 1))
        elif isinstance(item, list):
            pending.extend(
                (child, f"{where}[{index}]", depth + 1)
                for index, child in reversed(list(enumerate(item)))
            )
        else:
            return f"{where}: {type(item).__name__} is not JSON"
    return None
