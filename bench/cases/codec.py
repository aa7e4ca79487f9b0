"""Codec: what one stored event costs to read, build, hold and collect, per candidate.

The candidates for holding and checking an event (issue 20), measured in the
same run on the same events (a `message/assistant` with one tool call, and
the durability case's `message/user`):

- `first edition`: the pydantic model dsh used before — `JsonValue` (a
  Python discriminator per node) plus a second walk for finiteness;
- `dsh` (this edition): `SessionEvent`, data held as canonical bytes;
  pydantic-core's serializer and parser (`to_json` / `from_json`) check a
  value in one pass of C code (serialise, parse back, compare);
- `orjson` and `msgspec` doing the same check (serialise, parse back,
  compare), and `json` (the standard library): only their codec cost, for
  comparison. Neither can be the canonical writer: orjson refuses integers
  past 64 bits (and reads them back as floats), msgspec writes `1e16` where
  the stored form (pydantic-core's) has `1e+16`, and the standard library
  writes `1e-07` for `1e-7`.

Figures: µs per event to read a stored line into a checked event, to build
one from Python data, to get its data back; bytes and GC-tracked objects per
held event (10,000 held, `tracemalloc` and `gc.get_objects`).
"""

from __future__ import annotations

import gc
import json
import math
import timeit
import tracemalloc
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue
from pydantic_core import from_json, to_json

from dsh.session.event import SessionEvent

from ..sizes import Size

__all__ = ["codec"]

ASSISTANT: JsonValue = {
    "text": "Setting a reminder for you, in ten minutes.",
    "toolCalls": [
        {
            "id": "call_1",
            "name": "schedule_create",
            "arguments": {"prompt": "stretch", "after_seconds": 600},
        }
    ],
}
USER: JsonValue = {"text": "hello world, this is a short user message", "source": {"kind": "user"}}


def _finite(value: JsonValue) -> JsonValue:
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("not a JSON number")
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return value


class FirstEditionEvent(BaseModel):
    """The first edition's `SessionEvent`, for comparison."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid")

    seq: Annotated[int, Field(ge=0)]
    type: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*$")]
    time: int
    data: Annotated[JsonValue, AfterValidator(_finite)]


def _us(function: Any, number: int) -> float:
    return round(min(timeit.repeat(function, number=number, repeat=5)) / number * 1e6, 3)


def _candidates() -> dict[str, Any]:
    found: dict[str, Any] = {"json": json}
    try:
        import orjson

        found["orjson"] = orjson
    except ImportError:
        pass
    try:
        import msgspec

        found["msgspec"] = msgspec
    except ImportError:
        pass
    return found


def _speeds(data: JsonValue, number: int) -> dict[str, dict[str, float]]:
    line = SessionEvent(seq=12, type="message/assistant", time=1_767_225_600_000, data=data)
    raw = line.to_bytes()
    held = SessionEvent.from_json(raw)
    old = FirstEditionEvent.model_validate_json(raw)
    figures: dict[str, dict[str, float]] = {
        "first edition (pydantic model)": {
            "read_us": _us(lambda: FirstEditionEvent.model_validate_json(raw), number),
            "build_us": _us(
                lambda: FirstEditionEvent(seq=1, type="message/assistant", time=5, data=data),
                number,
            ),
            "data_us": _us(lambda: old.data, number),
        },
        "dsh (pydantic-core, bytes held)": {
            "read_us": _us(lambda: SessionEvent.from_json(raw), number),
            "build_us": _us(
                lambda: SessionEvent(seq=1, type="message/assistant", time=5, data=data), number
            ),
            "data_us": _us(lambda: held.data, number),
            "check_us": _us(lambda: from_json(to_json(data)) == data, number),
        },
    }
    modules = _candidates()
    std = modules["json"]
    figures["json (stdlib)"] = {
        "read_us": _us(lambda: std.loads(raw), number),
        "check_us": _us(
            lambda: std.loads(std.dumps(data, allow_nan=False, separators=(",", ":"))) == data,
            number,
        ),
    }
    if "orjson" in modules:
        orjson = modules["orjson"]
        figures["orjson"] = {
            "read_us": _us(lambda: orjson.loads(raw), number),
            "check_us": _us(lambda: orjson.loads(orjson.dumps(data)) == data, number),
        }
    if "msgspec" in modules:
        msgspec = modules["msgspec"]
        decoder, encoder = msgspec.json.Decoder(), msgspec.json.Encoder()
        figures["msgspec"] = {
            "read_us": _us(lambda: decoder.decode(raw), number),
            "check_us": _us(lambda: decoder.decode(encoder.encode(data)) == data, number),
        }
    return figures


def _held(make: Any, count: int) -> dict[str, float]:
    gc.collect()
    tracked = len(gc.get_objects())
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    events = [make(seq) for seq in range(count)]
    size = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    gc.collect()
    objects = len(gc.get_objects()) - tracked - 1  # the list itself
    del events
    return {"bytes": round(size / count), "gc_objects": round(objects / count, 2)}


def codec(size: Size, data_dir: Path) -> dict[str, Any]:
    number = {"full": 20_000, "quick": 5_000}.get(size.name, 500)
    count = {"full": 10_000, "quick": 5_000}.get(size.name, 500)

    def old(seq: int) -> Any:
        return FirstEditionEvent(seq=seq, type="message/assistant", time=5, data=ASSISTANT)

    def new(seq: int) -> Any:
        return SessionEvent(seq=seq, type="message/assistant", time=5, data=ASSISTANT)

    return {
        "assistant": _speeds(ASSISTANT, number),
        "user": _speeds(USER, number),
        "held": {
            "first edition (pydantic model)": _held(old, count),
            "dsh (pydantic-core, bytes held)": _held(new, count),
        },
        "line_bytes": len(new(0).to_bytes()),
    }
