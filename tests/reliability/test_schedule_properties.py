"""The schedule decoder, fold and presentation against a small reference model of §8.

The reference is written here from DESIGN §8 alone, independently of the
plugin: a decoder that states each protocol v1 rule directly, and a fold that
is a dict of active ids plus a set of seen ids. (Protocol v2, §8b, has its own
reference and properties in `tests/schedule/`; v1 logs must keep folding
exactly as they did, which is what this file holds the plugin to.) Hypothesis feeds both the
same inputs — valid payloads, payloads broken by one targeted mutation (wrong
version, extra or missing field, malformed or reused id, delete of an
inactive id, impossible or badly spelt timestamp, a boolean or float for an
integer, untrimmed or empty prompt, a non-object) and arbitrary JSON — and
the plugin must agree with the reference on every one: same verdict, same
record, same fold state, same error position, same receipt pairing.
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh_tool_schedule import (
    ProtocolError,
    ScheduleFold,
    decode_change,
    schedule_reminder_presentation,
)
from dsh_tool_schedule.protocol import V1Create

from .figures import Figures

pytestmark = [pytest.mark.reliability]

EXAMPLES = 300
MAX_SAFE = 2**53 - 1
EVENT_TYPE = "schedule/change"
START_MS = 1_767_225_600_000
_ID = re.compile(r"rem-([1-9][0-9]*)")
_STAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z"
)

Verdict = tuple[Any, ...] | None


# -- the reference ----------------------------------------------------------------


def ref_int(value: Any) -> bool:
    return type(value) is int and 1 <= value <= MAX_SAFE


def ref_id(value: Any) -> bool:
    if type(value) is not str:
        return False
    match = _ID.fullmatch(value)
    return match is not None and int(match.group(1)) <= MAX_SAFE


def ref_stamp(value: Any) -> int | None:
    """Epoch ms of a valid protocol timestamp, else None."""
    if type(value) is not str:
        return None
    match = _STAMP.fullmatch(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, millis = (int(part) for part in match.groups())
    if not (year >= 1 and 1 <= month <= 12 and hour < 24 and minute < 60 and second < 60):
        return None
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    seconds = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    return seconds * 1000 + millis


def ref_prompt(value: Any) -> bool:
    return type(value) is str and value != "" and value == value.strip()


def ref_decode(data: Any) -> Verdict:
    """`("create", id, prompt, seconds, stamp, due)`, `("delete"|"dispatch", id)`, or None."""
    if type(data) is not dict:
        return None
    version = data.get("version")
    change = data.get("change")
    if type(version) is int and version == 2 and change == "delete":
        # §8b: a v2 delete has the v1 delete's shape (a mutated version can make one).
        if set(data) != {"version", "change", "id"} or not ref_id(data["id"]):
            return None
        return ("delete", data["id"])
    if type(version) is not int or version != 1:
        return None
    if change == "create":
        record = data.get("record")
        if set(data) != {"version", "change", "record"} or type(record) is not dict:
            return None
        if set(record) != {"id", "kind", "prompt", "afterSeconds", "scheduledAt"}:
            return None
        due = ref_stamp(record["scheduledAt"])
        if not (
            ref_id(record["id"])
            and record["kind"] == "after"
            and type(record["kind"]) is str
            and ref_prompt(record["prompt"])
            and ref_int(record["afterSeconds"])
            and due is not None
        ):
            return None
        return (
            "create",
            record["id"],
            record["prompt"],
            record["afterSeconds"],
            record["scheduledAt"],
            due,
        )
    if change in ("delete", "dispatch") and type(change) is str:
        if set(data) != {"version", "change", "id"} or not ref_id(data["id"]):
            return None
        return (change, data["id"])
    return None


def product_verdict(data: Any) -> Verdict:
    try:
        change = decode_change(data)
    except ProtocolError:
        return None
    if change.version == 2 and change.change != "delete":
        return ("v2", change.change)  # no strategy below writes a valid one
    if isinstance(change, V1Create):
        record = change.record
        return (
            "create",
            record.id,
            record.prompt,
            record.after_seconds,
            record.scheduled_at,
            record.due_ms,
        )
    return (change.change, change.id)


class ReferenceFold:
    """Active ids (in creation order) and seen ids; stops at the first rejected event."""

    def __init__(self, events: list[SessionEvent], start: int) -> None:
        self.active: dict[str, tuple[int, int]] = {}  # id -> (due, seq)
        self.seen: set[str] = set()
        self.highest = 0
        self.error: int | None = None
        for event in events[start:]:
            if event.type != EVENT_TYPE:
                continue
            verdict = ref_decode(event.data)
            if verdict is None:
                self.error = event.seq
                return
            if verdict[0] == "create":
                rid = verdict[1]
                if rid in self.seen:
                    self.error = event.seq
                    return
                self.seen.add(rid)
                self.highest = max(self.highest, int(rid[4:]))
                self.active[rid] = (verdict[5], event.seq)
            elif verdict[1] in self.active:
                del self.active[verdict[1]]
            else:
                self.error = event.seq
                return

    def earliest(self) -> str | None:
        if not self.active:
            return None
        return min(self.active, key=lambda rid: self.active[rid])


def ref_receipt(events: list[SessionEvent], seed: int, seq: int) -> dict[str, Any] | None:
    """DESIGN §8 "Presentation": the receipt the dispatch at `seq` pairs to, or None.

    §8b adds: a Session's own dispatch has a receipt only when the fold accepts
    it (no rejected event at or before it in `[seed, seq]`).
    """
    event = events[seq]
    verdict = ref_decode(event.data) if event.type == EVENT_TYPE else None
    if verdict is None or verdict[0] != "dispatch":
        return None
    if seq >= seed:
        stopped = ReferenceFold(events[: seq + 1], seed).error
        if stopped is not None:
            return None
    floor = seed if seq >= seed else 0
    for earlier in reversed(events[floor:seq]):
        found = ref_decode(earlier.data) if earlier.type == EVENT_TYPE else None
        if found is not None and found[0] == "create" and found[1] == verdict[1]:
            return {
                "scheduleId": found[1],
                "prompt": found[2],
                "occurrenceAt": found[4],
                "deliveryMode": "session-local",
            }
    return None


# -- strategies -------------------------------------------------------------------

JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=10,
)
IDS = st.integers(1, 6).map(lambda n: f"rem-{n}") | st.sampled_from([f"rem-{MAX_SAFE}", "rem-10"])
PROMPTS = st.text(min_size=1, max_size=12).filter(lambda text: text == text.strip())
STAMPS = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999_000)
).map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z")

BAD_VERSIONS = [0, 2, True, 1.0, "1", None, -1]
BAD_IDS = [
    "rem-0",
    "rem-01",
    "rem-",
    "REM-1",
    f"rem-{MAX_SAFE + 1}",
    " rem-1",
    "rem-1 ",
    "rem-\u0661",
    "rem-1\n",
    1,
    None,
    "",
    "rem--1",
    "rem-1.0",
]
BAD_PROMPTS = ["", " x", "x ", "\tx", "x\n", "\u3000x", "x\u00a0", 5, None, ["x"]]
BAD_SECONDS = [0, -1, MAX_SAFE + 1, True, False, 1.5, 10.0, "5", None, 2**64]
BAD_STAMPS = [
    "2026-01-01T00:00:10.000",
    "2026-01-01T00:00:10.000+00:00",
    "2026-01-01T00:00:10.000z",
    "2026-01-01 00:00:10.000Z",
    "2026-01-01T00:00:10.00Z",
    "2026-01-01T00:00:10.0000Z",
    "2026-02-30T00:00:00.000Z",
    "2026-01-01T24:00:00.000Z",
    "2026-12-31T23:59:60.000Z",
    "0000-01-01T00:00:00.000Z",
    "\u0662026-01-01T00:00:00.000Z",
    "2026-01-01T00:00:10.000Z\n",
    "",
    "2026-13-01T00:00:00.000Z",
    "2026-00-10T00:00:00.000Z",
    "2026-1-01T00:00:00.000Z",
    1_767_225_600_000,
    None,
]
BAD_KINDS = ["at", "AFTER", "after ", None, 1]
BAD_CHANGES = ["Create", "update", "dispatched", None, 1, ""]


@st.composite
def create_change(draw: st.DrawFn, rid: str) -> dict[str, Any]:
    record = {
        "id": rid,
        "kind": "after",
        "prompt": draw(PROMPTS),
        "afterSeconds": draw(st.integers(1, MAX_SAFE)),
        "scheduledAt": draw(STAMPS),
    }
    return {"version": 1, "change": "create", "record": record}


@st.composite
def valid_change(draw: st.DrawFn, rid: st.SearchStrategy[str] = IDS) -> dict[str, Any]:
    change = draw(st.sampled_from(["create", "create", "delete", "dispatch"]))
    if change != "create":
        return {"version": 1, "change": change, "id": draw(rid)}
    return draw(create_change(draw(rid)))


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return apply


@st.composite
def mutated_change(draw: st.DrawFn) -> Any:
    """A valid change broken (usually) by one targeted mutation."""
    data = draw(valid_change())
    record = "record" in data
    id_path = ("record", "id") if record else ("id",)
    mutations: list[Callable[[dict[str, Any]], None]] = [
        _set(("version",), draw(st.sampled_from(BAD_VERSIONS))),
        _set(id_path, draw(st.sampled_from(BAD_IDS))),
        _set(("change",), draw(st.sampled_from(BAD_CHANGES))),
        _set((draw(st.sampled_from(["extra", "Version", "ID"])),), draw(JSON)),
        lambda d: d.pop(draw(st.sampled_from(sorted(d)))),
    ]
    if record:
        mutations += [
            _set(("record", "prompt"), draw(st.sampled_from(BAD_PROMPTS))),
            _set(("record", "afterSeconds"), draw(st.sampled_from(BAD_SECONDS))),
            _set(("record", "scheduledAt"), draw(st.sampled_from(BAD_STAMPS))),
            _set(("record", "kind"), draw(st.sampled_from(BAD_KINDS))),
            _set(("record", draw(st.sampled_from(["extra", "every_seconds", "cron"]))), 1),
            lambda d: d["record"].pop(draw(st.sampled_from(sorted(d["record"])))),
            _set(("record",), draw(st.sampled_from([None, [], "x"]))),
            _set(("change",), draw(st.sampled_from(["delete", "dispatch"]))),
        ]
    else:
        mutations.append(_set(("change",), "create"))
    draw(st.sampled_from(mutations))(data)
    if draw(st.booleans()) and draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([[data], "x", None, 1]))
    return data


PAYLOADS = st.one_of(valid_change(), mutated_change(), JSON)


@st.composite
def legal_change(draw: st.DrawFn, active: list[str], used: int) -> dict[str, Any]:
    """A change that is legal after the log so far: a fresh create, or a finish of an
    active id (the fold must accept it, so long logs reach deep states)."""
    finish: bool = draw(st.booleans())
    if active and finish:
        change = draw(st.sampled_from(["delete", "dispatch"]))
        return {"version": 1, "change": change, "id": draw(st.sampled_from(active))}
    return draw(create_change(f"rem-{used + draw(st.integers(1, 3))}"))


@st.composite
def schedule_log(draw: st.DrawFn) -> tuple[list[SessionEvent], int]:
    """A log of schedule changes — legal ones, random ones (reused ids, finishes of
    inactive ids), corrupted ones — and events of other types."""
    size = draw(st.integers(0, 24))
    events: list[SessionEvent] = []
    active: list[str] = []
    used = 0
    kinds = ["legal"] * 6 + ["random"] * 2 + ["mutated", "other", "other", "lookalike"]
    for seq in range(size):
        kind = draw(st.sampled_from(kinds))
        event_type = EVENT_TYPE
        if kind == "legal":
            data = draw(legal_change(active, used))
        elif kind == "random":
            data = draw(valid_change(st.integers(1, 4).map("rem-{}".format)))
        elif kind == "mutated":
            data = draw(mutated_change())
        elif kind == "lookalike":  # another type carrying a schedule payload: never folded
            event_type, data = "schedule/other", draw(valid_change())
        else:
            event_type, data = "message/user", {"text": draw(st.text(max_size=5))}
        verdict = ref_decode(data) if event_type == EVENT_TYPE else None
        if verdict is not None and verdict[0] == "create" and verdict[1] not in active:
            active.append(verdict[1])
            used = max(used, int(verdict[1][4:]))
        elif verdict is not None and verdict[1] in active:
            active.remove(verdict[1])
        events.append(SessionEvent(seq=seq, type=event_type, time=START_MS + seq, data=data))
    seed = draw(st.integers(0, size)) if draw(st.booleans()) else 0
    return events, seed


def _spelt(epoch_ms: int) -> str:
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def session_of(events: list[SessionEvent], seed: int) -> Session:
    base = Session.new("prop", cwd="/", created_at=START_MS)
    header = base.header.model_copy(update={"seed_length": seed or None})
    return Session(header, events)


def run(check: Callable[[], None], examples: int) -> None:
    settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )(check)()


# -- the properties ---------------------------------------------------------------


def test_the_decoder_agrees_with_the_reference_on_valid_mutated_and_arbitrary_payloads(
    scale: int, figures: Figures
) -> None:
    seen: Counter[str] = Counter()

    @given(payload=PAYLOADS)
    def check(payload: Any) -> None:
        expected = ref_decode(payload)
        assert product_verdict(payload) == expected, payload
        seen["valid" if expected is not None else "rejected"] += 1

    run(check, EXAMPLES * scale)
    figures.merge("properties", {f"decoder_{key}": value for key, value in seen.items()})
    assert seen["valid"] > 0 and seen["rejected"] > 0


def test_the_fold_matches_the_reference_model_from_scratch_and_incrementally(
    scale: int, figures: Figures
) -> None:
    seen: Counter[str] = Counter()

    @given(log=schedule_log(), cuts=st.lists(st.integers(0, 24), max_size=4))
    def check(log: tuple[list[SessionEvent], int], cuts: list[int]) -> None:
        events, seed = log
        session = session_of(events, seed)
        reference = ReferenceFold(events, seed)
        fold = ScheduleFold.of(session)
        assert (fold.error.seq if fold.error else None) == reference.error
        assert [item.id for item in fold.reminders()] == list(reference.active)
        assert fold.next_id() == f"rem-{reference.highest + 1}"
        reminders = fold.reminders()
        earliest = min(reminders, key=lambda item: (item.next_ms, item.seq), default=None)
        assert (earliest.id if earliest else None) == reference.earliest()
        incremental = ScheduleFold(session.fold_start)
        for cut in [*sorted(cuts), len(events)]:
            incremental.advance(session, min(cut, len(events)))
        assert incremental.error == fold.error
        assert incremental.reminders() == fold.reminders()
        seen["rejected" if reference.error is not None else "accepted"] += 1
        seen["events"] += len(events)

    run(check, EXAMPLES * scale)
    figures.merge("properties", {f"fold_{key}": value for key, value in seen.items()})
    assert seen["accepted"] > 0 and seen["rejected"] > 0


def test_every_receipt_pairs_as_the_reference_says(scale: int, figures: Figures) -> None:
    seen: Counter[str] = Counter()

    @given(log=schedule_log())
    def check(log: tuple[list[SessionEvent], int]) -> None:
        events, seed = log
        session = session_of(events, seed)
        for seq in range(-1, len(events) + 1):
            expected = ref_receipt(events, seed, seq) if 0 <= seq < len(events) else None
            got = schedule_reminder_presentation(session, seq)
            if got is not None:
                # A v1 record reads as once, `after`, in UTC, delivered when the dispatch was.
                assert (got["missed"], got["timeZone"], got["rule"]["kind"]) == (0, "UTC", "after")
                assert got["deliveredAt"] == _spelt(events[seq].time)
                got = {key: got[key] for key in ("scheduleId", "prompt", "occurrenceAt")} | {
                    "deliveryMode": got["deliveryMode"]
                }
            assert got == expected, seq
            seen["receipts" if expected is not None else "none"] += 1

    run(check, EXAMPLES * scale)
    figures.merge("properties", {f"presentation_{key}": value for key, value in seen.items()})
    assert seen["receipts"] > 0


def test_the_reference_reads_timestamps_as_the_utc_instant_they_spell() -> None:
    """The reference itself is checked against the calendar, so agreement means something."""
    stamp = "2026-03-01T12:34:56.789Z"
    moment = datetime(2026, 3, 1, 12, 34, 56, 789_000, tzinfo=UTC)
    assert ref_stamp(stamp) == int(moment.timestamp() * 1000)
    assert ref_stamp("2024-02-29T00:00:00.000Z") is not None
    assert ref_stamp("2023-02-29T00:00:00.000Z") is None
    assert ref_decode({"version": 1, "change": "delete", "id": "rem-1"}) == ("delete", "rem-1")
    assert ref_decode({"version": True, "change": "delete", "id": "rem-1"}) is None
