"""`SessionEvent`: one immutable event of a Session log (public shape, docs/DESIGN.md §2).

`{"seq", "type", "time", "data"}`; the JSON form is the public one and
`to_json()` / `from_json()` round-trip to identical bytes. The event holds
its data as canonical JSON bytes (see the class docstring for why).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import JsonValue, ValidationError
from pydantic_core import PydanticCustomError

from ..base.jsonbytes import decode, encode, finite_bytes, parse_object
from ..base.limits import MAX_EVENT_BYTES, MAX_EVENT_DEPTH
from .types import EVENT_TYPE_PATTERN

__all__ = ["SessionEvent"]

_EVENT_TYPE = re.compile(EVENT_TYPE_PATTERN)
_EVENT_KEYS = frozenset(("seq", "type", "time", "data"))
_CANONICAL_LINE = re.compile(
    rb'\{"seq":(0|[1-9][0-9]*),"type":"([a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*)",'
    rb'"time":(-?(?:0|[1-9][0-9]*)),"data":'
)
# A whole canonical line, newline included: the envelope, then the data (group 4).
_CANONICAL_LINES = re.compile(_CANONICAL_LINE.pattern + rb"([^\n]*)\}\n")
_MAX_TYPE_LENGTH = 128
_FORM = b'{"seq":%d,"type":"%s","time":%d,"data":%s}'
_LINE = _FORM + b"\n"
_CLOSE = ord("}")
Problems = list[tuple[str, str, object]]


class SessionEvent:
    """One immutable event: `{"seq", "type", "time", "data"}` (public).

    An event holds its `data` as the canonical JSON bytes it is stored in, not
    as Python objects: it is one small object instead of a tree of them (a
    few hundred bytes instead of ≈ 2 KB, and nothing inside it for the cyclic
    collector to walk), and writing it is copying bytes. `data` decodes those
    bytes on every access and returns a fresh value, so nobody can change a
    stored event through it: read it once where you use it several times.

    Constructing one validates everything the public form requires: `seq` a
    non-negative int, `type` an `area/name` of at most 128 characters, `time`
    an int, `data` plain finite JSON (dicts with string keys, lists, strings,
    ints, finite floats, booleans, None) at most `MAX_EVENT_DEPTH` deep and
    `MAX_EVENT_BYTES` long (`dsh.limits`). A violation raises
    `pydantic.ValidationError` naming the field and the problem. Events are
    frozen (assigning raises `AttributeError`), equal when their JSON is, and
    hashable.

    The fields may be passed by keyword (`SessionEvent(seq=…, type=…,
    time=…, data=…)`, the readable form) or in that order: a class called
    with keywords packs them into a dict first, which costs ≈ 0.15 µs of an
    event's ≈ 2 µs, so the Session's append passes them in order.
    """

    __slots__ = ("_data", "seq", "time", "type")

    seq: int
    type: str
    time: int
    _data: bytes

    def __init__(self, seq: int, type: str, time: int, data: object) -> None:
        problems: Problems = []
        if builtins.type(seq) is not int or seq < 0:
            problems.append(("seq", "expected an integer of at least 0", seq))
        _check_type(type, problems)
        if builtins.type(time) is not int:
            problems.append(("time", "expected an integer (epoch milliseconds)", time))
        raw = b""
        try:
            raw = encode(data, max_depth=MAX_EVENT_DEPTH, max_bytes=MAX_EVENT_BYTES)
        except ValueError as error:
            problems.append(("data", str(error).removeprefix("data: "), data))
        if problems:
            raise _invalid(problems)
        _set_seq(self, seq)
        _set_type(self, type)
        _set_time(self, time)
        _set_data(self, raw)

    @classmethod
    def _trusted(cls, seq: int, type: str, time: int, data: bytes) -> SessionEvent:
        # Parts that are already valid (a parsed line, a copy): no second check.
        event = object.__new__(cls)
        _set_seq(event, seq)
        _set_type(event, type)
        _set_time(event, time)
        _set_data(event, data)
        return event

    @property
    def data(self) -> JsonValue:
        """The event's data, decoded afresh on every access."""
        return decode(self._data)

    @property
    def data_json(self) -> bytes:
        """The canonical JSON bytes of `data` (what is stored)."""
        return self._data

    def to_bytes(self) -> bytes:
        """The canonical one-line JSON form as UTF-8 bytes (no newline)."""
        return _FORM % (self.seq, self.type.encode(), self.time, self._data)

    @staticmethod
    def lines(events: Iterable[SessionEvent]) -> list[bytes]:
        """Each event's canonical form with its newline: the lines a log holds."""
        line = _LINE
        return [
            line % (event.seq, event.type.encode(), event.time, event._data) for event in events
        ]

    def to_json(self) -> str:
        """The canonical one-line JSON form (no spaces, non-ASCII kept)."""
        return self.to_bytes().decode("utf-8")

    def to_dict(self) -> dict[str, JsonValue]:
        """The public JSON form as plain Python data."""
        return {"seq": self.seq, "type": self.type, "time": self.time, "data": self.data}

    @classmethod
    def from_json(cls, text: str | bytes) -> SessionEvent:
        """Parse one stored event, at any depth a writer of any edition produced.

        Raises `pydantic.ValidationError` naming the problem.
        """
        raw = text.encode("utf-8") if isinstance(text, str) else text
        event = cls.from_canonical_json(raw)
        if event is not None:
            return event
        try:
            value = parse_object(text)
        except ValueError as error:
            raise _invalid([("", f"invalid JSON: {error}", text)]) from None
        return cls.from_dict(value)

    @classmethod
    def from_canonical_json(
        cls, raw: bytes, start: int = 0, stop: int | None = None
    ) -> SessionEvent | None:
        """The event of a line in the canonical form (every line dsh writes), or None.

        The line is `raw[start:stop]` (without its newline). Its envelope is
        read from its first bytes, and its data is proven canonical and finite
        by writing it again and getting the same bytes; None means the line is
        not canonical (`from_json` then decodes it in full, and may still
        accept it).
        """
        stop = len(raw) if stop is None else stop
        found = _CANONICAL_LINE.match(raw, start, stop)
        if found is None or raw[stop - 1] != _CLOSE or len(found[2]) > _MAX_TYPE_LENGTH:
            return None
        data = raw[found.end() : stop - 1]
        try:
            if finite_bytes(parse_object(data)) != data:
                return None
        except ValueError:
            return None
        return cls._trusted(int(found[1]), found[2].decode(), int(found[3]), data)

    @classmethod
    def _from_proven_lines(
        cls, raw: bytes, start: int, stop: int
    ) -> Iterator[tuple[int, int, SessionEvent]]:
        """`(start, end, event)` for each line of `raw[start:stop]`, newline included,
        read from its envelope only: no check of its data at all.

        Stops before the first line that is not in the canonical envelope or
        does not begin where the one before ended. Private on purpose: its one
        caller is the JSONL store's `proven`, for bytes it can show were proven
        before and did not change since.
        """
        trusted = cls._trusted
        expected = start
        for found in _CANONICAL_LINES.finditer(raw, start, stop):
            if found.start() != expected or len(found[2]) > _MAX_TYPE_LENGTH:
                return
            event = trusted(int(found[1]), found[2].decode(), int(found[3]), found[4])
            expected = found.end()
            yield found.start(), expected, event

    @classmethod
    def from_dict(cls, value: object) -> SessionEvent:
        """Validate a parsed JSON event: exactly `{"seq", "type", "time", "data"}`."""
        if builtins.type(value) is not dict:
            raise _invalid([("", "expected a JSON object", value)])
        problems: Problems = []
        if value.keys() != _EVENT_KEYS:
            problems.extend(
                (key, "field required", value) for key in sorted(_EVENT_KEYS - value.keys())
            )
            problems.extend(
                (str(key), "extra fields are not permitted", value[key])
                for key in sorted(value.keys() - _EVENT_KEYS, key=str)
            )
        seq, type, time = value.get("seq"), value.get("type"), value.get("time")
        if "seq" in value and (builtins.type(seq) is not int or seq < 0):
            problems.append(("seq", "expected an integer of at least 0", seq))
        if "type" in value:
            _check_type(type, problems)
        if "time" in value and builtins.type(time) is not int:
            problems.append(("time", "expected an integer (epoch milliseconds)", time))
        raw = b""
        if "data" in value:
            try:
                raw = finite_bytes(value["data"])
            except ValueError as error:
                problems.append(("data", str(error).removeprefix("data: "), value["data"]))
        if problems:
            raise _invalid(problems)
        return cls._trusted(seq, type, time, raw)  # type: ignore[arg-type]

    def replace(self, **changes: object) -> SessionEvent:
        """A new event with some of `seq`, `type`, `time`, `data` changed (validated)."""
        unknown = set(changes) - _EVENT_KEYS
        if unknown:
            raise TypeError(f"SessionEvent has no field {sorted(unknown)[0]!r}")
        fields: dict[str, Any] = {"seq": self.seq, "type": self.type, "time": self.time}
        fields.update(changes)
        if "data" not in changes:
            return SessionEvent._check_parts(fields, self._data)
        return SessionEvent(**fields)

    @classmethod
    def _check_parts(cls, fields: dict[str, Any], data: bytes) -> SessionEvent:
        problems: Problems = []
        seq, type, time = fields["seq"], fields["type"], fields["time"]
        if builtins.type(seq) is not int or seq < 0:
            problems.append(("seq", "expected an integer of at least 0", seq))
        _check_type(type, problems)
        if builtins.type(time) is not int:
            problems.append(("time", "expected an integer (epoch milliseconds)", time))
        if problems:
            raise _invalid(problems)
        return cls._trusted(seq, type, time, data)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a SessionEvent is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a SessionEvent is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SessionEvent):
            return NotImplemented
        return (
            self.seq == other.seq
            and self.time == other.time
            and self.type == other.type
            and self._data == other._data
        )

    def __hash__(self) -> int:
        return hash((self.seq, self.type, self.time, self._data))

    def __repr__(self) -> str:
        data = self._data if len(self._data) <= 80 else self._data[:77] + b"..."
        return (
            f"SessionEvent(seq={self.seq}, type={self.type!r}, time={self.time}, "
            f"data={data.decode('utf-8', 'replace')})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (SessionEvent._trusted, (self.seq, self.type, self.time, self._data))


_set_seq = SessionEvent.__dict__["seq"].__set__
_set_type = SessionEvent.__dict__["type"].__set__
_set_time = SessionEvent.__dict__["time"].__set__
_set_data = SessionEvent.__dict__["_data"].__set__


def _check_type(value: object, problems: Problems) -> None:
    if builtins.type(value) is not str:
        problems.append(("type", "expected a string", value))
    elif len(value) > _MAX_TYPE_LENGTH:
        problems.append(("type", f"longer than {_MAX_TYPE_LENGTH} characters", value))
    elif _EVENT_TYPE.fullmatch(value) is None:
        problems.append(("type", "expected 'area/name' (lowercase letters, digits, _ . -)", value))


def _invalid(problems: Problems) -> ValidationError:
    return ValidationError.from_exception_data(
        "SessionEvent",
        [
            {
                "type": PydanticCustomError("invalid_event", "{problem}", {"problem": message}),
                "loc": (where,) if where else (),
                "input": given,
            }
            for where, message, given in problems
        ],
    )
