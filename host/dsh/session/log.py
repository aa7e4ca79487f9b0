"""The Session log: its header, its events, and how a Session is built.

A Session is an append-only list of `SessionEvent`s under a `SessionHeader`.
The header is a strict, frozen pydantic model; an event is a compact
immutable record holding its data as canonical JSON bytes (`SessionEvent`).
Both JSON forms are the public ones (camelCase keys, DESIGN §2); `to_json()`
and `from_json()` round-trip to identical bytes.

The live `Session` object is deliberately plain: only the `LiveSessions` appends
to it (through `_append`), and its identity — not its id — names one live
lifecycle, so a Session reopened under the same id is a different object.
"""

from __future__ import annotations

import builtins
import re
from bisect import bisect_left
from collections.abc import Collection, Iterator, Sequence
from typing import Annotated, Any, Literal, Protocol, overload, runtime_checkable

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from ..base.jsonbytes import decode, encode, finite_bytes, parse_object
from ..base.limits import MAX_EVENT_BYTES, MAX_EVENT_DEPTH
from .errors import InvalidSessionId

__all__ = [
    "END_SEED",
    "SESSION_ID_PATTERN",
    "Lineage",
    "Origin",
    "Session",
    "SessionEvent",
    "SessionHeader",
    "SessionLog",
    "validate_session_id",
]

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
END_SEED = "session/end-seed"
EVENT_TYPE_PATTERN = r"^[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*$"


def validate_session_id(value: str) -> str:
    """Return `value` unchanged if it is a valid Session id, else raise `InvalidSessionId`.

    Every path that turns an id into a file name calls this first.
    """
    if not isinstance(value, str) or SESSION_ID_PATTERN.fullmatch(value) is None:
        raise InvalidSessionId(value)
    return value


SessionId = Annotated[str, AfterValidator(validate_session_id)]


def _exact_int(value: object) -> object:
    # Strict mode still lets `true` and `1.0` satisfy `Literal[1]` (they compare equal).
    if type(value) is not int:
        raise ValueError(f"expected the integer 1, got {type(value).__name__}")
    return value


def _no_json_null(value: object, info: ValidationInfo) -> object:
    # In JSON an optional key is either absent or an int: an explicit `null` would be
    # dropped on serialising, so it could never round-trip to identical bytes. (In
    # Python, None is the field's own "absent" value.)
    if value is None and info.mode == "json":
        raise ValueError("omit the key instead of writing null")
    return value


OptionalCount = Annotated[Annotated[int, Field(ge=0)] | None, BeforeValidator(_no_json_null)]

_RECORD = ConfigDict(frozen=True, strict=True, extra="forbid", populate_by_name=False)
_EVENT_TYPE = re.compile(EVENT_TYPE_PATTERN)
_EVENT_KEYS = frozenset(("seq", "type", "time", "data"))
_CANONICAL_LINE = re.compile(
    rb'\{"seq":(0|[1-9][0-9]*),"type":"([a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*)",'
    rb'"time":(-?(?:0|[1-9][0-9]*)),"data":'
)
# A whole canonical line, newline included: the envelope, then the data (group 4).
_CANONICAL_LINES = re.compile(_CANONICAL_LINE.pattern + rb"([^\n]*)\}\n")
_MAX_TYPE_LENGTH = 128
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
    """

    __slots__ = ("_data", "seq", "time", "type")

    seq: int
    type: str
    time: int
    _data: bytes

    def __init__(self, *, seq: int, type: str, time: int, data: object) -> None:
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
        return b'{"seq":%d,"type":"%s","time":%d,"data":%s}' % (
            self.seq,
            self.type.encode(),
            self.time,
            self._data,
        )

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


class _Record(BaseModel):
    """A frozen part of a header: every live Session keeps one of each."""

    model_config = _RECORD

    def model_post_init(self, context: Any, /) -> None:
        # One shared `model_fields_set` per set of given fields rather than a set
        # per instance (≈ 0.9 KB a header). Sharing is safe: a frozen model never
        # adds to it, and pydantic copies it before a `model_copy` updates it.
        given = self.__pydantic_fields_set__
        object.__setattr__(
            self, "__pydantic_fields_set__", _FIELDS_SETS.setdefault(frozenset(given), given)
        )


_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


class Origin(_Record):
    """Where a Session came from."""

    kind: Literal["web", "cli", "fork", "api"]


class Lineage(_Record):
    """A fork's parent: its id and how many parent events were copied (`forkedAt`)."""

    parent_id: SessionId = Field(alias="parentId")
    forked_at: int = Field(alias="forkedAt", ge=0)


class SessionHeader(_Record):
    """The immutable header of a Session (public).

    `delegation_depth` is `None` when the key is absent, which means 0;
    `seed_length` is set on forks only. Absent optional keys stay absent in the
    JSON form so that parsing and serialising again gives identical bytes.
    """

    version: Annotated[Literal[1], BeforeValidator(_exact_int)]
    id: SessionId
    cwd: str
    created_at: int = Field(alias="createdAt")
    origin: Origin
    lineage: Lineage | None
    delegation_depth: OptionalCount = Field(default=None, alias="delegationDepth")
    seed_length: OptionalCount = Field(default=None, alias="seedLength")

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("delegationDepth", "seedLength", "delegation_depth", "seed_length"):
            if key in data and data[key] is None:
                del data[key]
        return data

    @property
    def depth(self) -> int:
        """The delegation depth, with an absent key read as 0."""
        return self.delegation_depth or 0

    def canonical(self) -> SessionHeader:
        """The stored form: an absent `delegationDepth` written as 0 (else `self`)."""
        if self.delegation_depth is not None:
            return self
        return self.model_copy(update={"delegation_depth": self.depth})

    def identity_equals(self, other: SessionHeader) -> bool:
        """True when both headers name the same Session lifecycle.

        Absent `delegationDepth` is equivalent to 0; every other field is exact.
        """
        return self.canonical() == other.canonical()

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> SessionHeader:
        return cls.model_validate_json(text)


@runtime_checkable
class SessionLog(Protocol):
    """A read-only view of one Session's log: what plugins read to fold and present.

    A live `Session` is one; the host also hands plugins stored logs of cold
    Sessions through this protocol, backed by ranged reads, so a plugin must
    not assume the whole log is in memory. Read what you need:

    - `event(seq)` is one event (`IndexError` outside `[0, len(log))`);
    - `scan(start, stop, types=..., reverse=...)` yields the events with
      `start <= seq < stop` (`stop` None: to the end), oldest first unless
      `reverse`, only those whose type is in `types` when given. Filtering by
      type is what keeps a fold of one plugin's events cheap in a long log.

    `len(log)` counts the events the view can read; `fold_start` is where
    plugins start folding (`seedLength` for a fork, else 0).
    """

    @property
    def header(self) -> SessionHeader: ...

    @property
    def id(self) -> str: ...

    @property
    def fold_start(self) -> int: ...

    def __len__(self) -> int: ...

    def event(self, seq: int) -> SessionEvent: ...

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]: ...


class Session:
    """A live Session: a header and its append-only events.

    Construct one with `new`, `fork` or `resume`. Appending belongs to the
    `LiveSessions` (which notifies listeners); nothing ever removes or rewrites
    an event. Equality is identity. A Session is a `SessionLog`: it keeps the
    seqs of each event type, so `scan(types=...)` visits only matching events.
    """

    __slots__ = ("__weakref__", "_by_type", "_events", "header")

    def __init__(self, header: SessionHeader, events: Sequence[SessionEvent] = ()) -> None:
        self._events: list[SessionEvent] = list(events)
        if [event.seq for event in self._events] != list(range(len(self._events))):
            index, event = next(
                (index, event) for index, event in enumerate(self._events) if event.seq != index
            )
            raise ValueError(f"session {header.id}: event at position {index} has seq {event.seq}")
        self.header = header
        self._by_type: dict[str, list[int]] = {}
        for seq, event in enumerate(self._events):
            seqs = self._by_type.get(event.type)
            if seqs is None:
                self._by_type[event.type] = [seq]
            else:
                seqs.append(seq)

    # -- construction -----------------------------------------------------

    @classmethod
    def new(
        cls,
        session_id: str,
        *,
        cwd: str,
        created_at: int,
        origin: Literal["web", "cli", "fork", "api"] = "web",
        delegation_depth: int | None = None,
    ) -> Session:
        """A fresh, empty Session."""
        header = SessionHeader(
            version=1,
            id=validate_session_id(session_id),
            cwd=cwd,
            createdAt=created_at,
            origin=Origin(kind=origin),
            lineage=None,
            delegationDepth=delegation_depth,
        )
        return cls(header)

    @classmethod
    def fork(
        cls,
        parent_header: SessionHeader,
        parent_events: Sequence[SessionEvent],
        child_id: str,
        *,
        at: int,
        created_at: int,
    ) -> Session:
        """A child that copies `parent_events[:at]` unchanged, then `session/end-seed`.

        The child's `seedLength` is `at + 1`: events from there on belong to the
        child. It keeps the parent's `delegationDepth`: a fork of a delegated
        Session is a delegated Session too.
        """
        if not 0 <= at <= len(parent_events):
            raise ValueError(
                f"cannot fork session {parent_header.id} at {at}: "
                f"it has {len(parent_events)} events"
            )
        header = SessionHeader(
            version=1,
            id=validate_session_id(child_id),
            cwd=parent_header.cwd,
            createdAt=created_at,
            origin=Origin(kind="fork"),
            lineage=Lineage(parentId=parent_header.id, forkedAt=at),
            delegationDepth=parent_header.delegation_depth,
            seedLength=at + 1,
        )
        prefix = list(parent_events[:at])
        prefix.append(SessionEvent(seq=at, type=END_SEED, time=created_at, data={}))
        return cls(header, prefix)

    @classmethod
    def resume(
        cls,
        header: SessionHeader,
        stored: Sequence[SessionEvent],
        *,
        resumed_at: int,
        marker: SessionEvent | None = None,
    ) -> Session:
        """A new live object for a stored Session, ending in a fresh `session/end-seed`.

        `marker` is the end-seed an earlier attempt to resume this Session
        appended before it failed: if the stored log ends with exactly that
        event (the attempt's write landed, its acknowledgement did not), the
        Session continues after it instead of appending a second one.
        """
        events = list(stored)
        if marker is None or not events or events[-1].to_json() != marker.to_json():
            events.append(SessionEvent(seq=len(events), type=END_SEED, time=resumed_at, data={}))
        return cls(header, events)

    # -- reading ----------------------------------------------------------

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def events(self) -> Sequence[SessionEvent]:
        """A read-only view of the events (the list itself is never handed out)."""
        return _EventsView(self._events)

    @property
    def fold_start(self) -> int:
        """Where plugins start folding: `seedLength` for a fork, else 0."""
        return self.header.seed_length or 0

    def __len__(self) -> int:
        return len(self._events)

    def event(self, seq: int) -> SessionEvent:
        """The event at `seq`; raises `IndexError` outside `[0, len(self))`."""
        if not 0 <= seq < len(self._events):
            raise IndexError(f"session {self.header.id} has no event {seq}")
        return self._events[seq]

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        """The events with `start <= seq < stop`, optionally of `types` only (`SessionLog`)."""
        end = len(self._events) if stop is None else min(stop, len(self._events))
        first = max(start, 0)
        seqs: Sequence[int]
        if types is None:
            seqs = range(first, end)
        else:
            runs = [_within(self._by_type.get(name, []), first, end) for name in set(types)]
            seqs = runs[0] if len(runs) == 1 else sorted(seq for run in runs for seq in run)
        for seq in reversed(seqs) if reverse else seqs:
            yield self._events[seq]

    def prefix(self, stop: int) -> SessionLog:
        """A read-only `SessionLog` of this Session's events `[0, stop)` (e.g. its durable part).

        The view is live: it reads this Session, but never past `stop`
        (clamped to the Session's length when it is read).
        """
        return _Prefix(self, stop)

    def __repr__(self) -> str:
        return f"<Session {self.header.id} len={len(self._events)} at {id(self):#x}>"

    # -- appending (LiveSessions only) -----------------------------------

    def _append(self, type: str, data: JsonValue, time: int) -> SessionEvent:
        event = SessionEvent(seq=len(self._events), type=type, time=time, data=data)
        self._events.append(event)
        self._by_type.setdefault(type, []).append(event.seq)
        return event


class _Prefix:
    """The first `stop` events of a Session, as a `SessionLog`."""

    __slots__ = ("_session", "_stop")

    def __init__(self, session: Session, stop: int) -> None:
        if stop < 0:
            raise ValueError(f"a prefix has a length of at least 0, not {stop}")
        self._session = session
        self._stop = stop

    @property
    def header(self) -> SessionHeader:
        return self._session.header

    @property
    def id(self) -> str:
        return self._session.id

    @property
    def fold_start(self) -> int:
        return self._session.fold_start

    def __len__(self) -> int:
        return min(self._stop, len(self._session))

    def event(self, seq: int) -> SessionEvent:
        if not 0 <= seq < len(self):
            raise IndexError(f"session {self.id} has no event {seq} in its first {len(self)}")
        return self._session.event(seq)

    def scan(
        self,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
        reverse: bool = False,
    ) -> Iterator[SessionEvent]:
        end = len(self) if stop is None else min(stop, len(self))
        return self._session.scan(start, end, types=types, reverse=reverse)

    def __repr__(self) -> str:
        return f"<first {len(self)} events of {self._session!r}>"


def _within(seqs: Sequence[int], start: int, stop: int) -> Sequence[int]:
    """The part of the sorted `seqs` in `[start, stop)`."""
    return seqs[bisect_left(seqs, start) : bisect_left(seqs, stop)]


class _EventsView(Sequence[SessionEvent]):
    """A live, read-only window on a Session's event list."""

    __slots__ = ("_items",)

    def __init__(self, items: list[SessionEvent]) -> None:
        self._items = items

    @overload
    def __getitem__(self, index: int) -> SessionEvent: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionEvent]: ...
    def __getitem__(self, index: int | slice) -> SessionEvent | Sequence[SessionEvent]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[SessionEvent]:
        return iter(self._items)
