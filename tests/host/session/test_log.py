from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from dsh.session.errors import InvalidSessionId
from dsh.session.event import SessionEvent
from dsh.session.header import Lineage, Origin, SessionHeader
from dsh.session.ids import validate_session_id
from dsh.session.log import Session, SessionLog
from dsh.session.types import END_SEED
from tests.support import strategies

HEADER = {
    "version": 1,
    "id": "s1",
    "cwd": "/home/me",
    "createdAt": 1_767_225_600_000,
    "origin": {"kind": "web"},
    "lineage": None,
}

json_values = strategies.json_values(max_leaves=20)
session_ids = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")


def header(**changes: Any) -> SessionHeader:
    return SessionHeader.model_validate({**HEADER, **changes})


def event(seq: int, type: str = "message/user", data: Any = None, time: int = 5) -> SessionEvent:
    return SessionEvent(seq=seq, type=type, time=time, data=data)


# -- SessionEvent -------------------------------------------------------------


def test_event_json_is_the_public_one_line_form() -> None:
    item = event(3, data={"text": "héllo", "source": {"kind": "user"}})
    assert item.to_json() == (
        '{"seq":3,"type":"message/user","time":5,"data":{"text":"héllo","source":{"kind":"user"}}}'
    )


@given(
    seq=st.integers(min_value=0),
    time=st.integers(),
    data=json_values,
    type=st.from_regex(r"\A[a-z0-9][a-z0-9_.-]{0,20}/[a-z0-9][a-z0-9_.-]{0,20}\Z"),
)
def test_event_serialise_parse_serialise_gives_identical_bytes(
    seq: int, time: int, data: Any, type: str
) -> None:
    first = SessionEvent(seq=seq, type=type, time=time, data=data).to_json()
    parsed = SessionEvent.from_json(first)
    assert parsed.to_json() == first
    assert SessionEvent.from_json(first.encode()) == parsed


@pytest.mark.parametrize(
    "text",
    [
        '{"seq":0,"type":"a/b","time":1,"data":null,"extra":1}',
        '{"seq":0,"type":"a/b","time":1}',
        '{"seq":-1,"type":"a/b","time":1,"data":null}',
        '{"seq":"0","type":"a/b","time":1,"data":null}',
        '{"seq":true,"type":"a/b","time":1,"data":null}',
        '{"seq":0.0,"type":"a/b","time":1,"data":null}',
        '{"seq":0,"type":"a/b","time":1.5,"data":null}',
        '{"seq":0,"type":"user","time":1,"data":null}',
        '{"seq":0,"type":"A/b","time":1,"data":null}',
        '{"seq":0,"type":"a/","time":1,"data":null}',
        '{"seq":0,"type":"a/b/c","time":1,"data":null}',
        '{"seq":0,"type":7,"time":1,"data":null}',
        '{"seq":0,"type":"a/b","time":1,"data":[NaN]}',
        '{"seq":0,"type":"a/b","time":1,"data":{"x":1e400}}',
        '{"seq":0,"type":"a/b","time":1,"data":-Infinity}',
        '{"seq":0,"type":"a/b","time":1,"data":',
    ],
)
def test_event_parsing_is_strict(text: str) -> None:
    with pytest.raises(ValidationError):
        SessionEvent.from_json(text)


def test_event_type_longer_than_128_characters_is_rejected() -> None:
    with pytest.raises(ValidationError):
        event(0, type="a/" + "b" * 127)


@pytest.mark.parametrize("data", [float("nan"), {"x": [float("inf")]}, (1, 2), {1: "x"}, object()])
def test_event_data_must_be_finite_json(data: Any) -> None:
    with pytest.raises(ValidationError):
        event(0, data=data)


def test_event_is_frozen() -> None:
    item = event(0, data={"a": [1]})
    with pytest.raises(AttributeError, match="immutable"):
        item.seq = 1  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del item.type
    # `data` is decoded afresh on every access: changing the copy changes nothing.
    copy = item.data
    assert isinstance(copy, dict)
    copy["a"] = 2
    assert item.data == {"a": [1]}


# -- SessionHeader --------------------------------------------------------------


def test_headers_share_their_fields_set_and_a_copy_gets_its_own() -> None:
    first = SessionHeader.from_json(json.dumps(HEADER))
    second = SessionHeader.from_json(json.dumps({**HEADER, "id": "other"}))
    assert first.model_fields_set is second.model_fields_set  # one set, not one per header
    shared = set(first.model_fields_set)

    copied = first.model_copy(update={"delegation_depth": 3})
    assert copied.depth == 3
    assert "delegation_depth" in copied.model_fields_set
    assert first.model_fields_set == second.model_fields_set == shared
    assert json.loads(first.to_json()) == HEADER


def test_a_canonical_header_is_its_own_canonical_form() -> None:
    stored = header(delegationDepth=0)
    assert stored.canonical() is stored
    absent = header()
    assert absent.delegation_depth is None
    assert absent.canonical().delegation_depth == 0
    assert absent.canonical() == stored


def test_header_json_uses_camel_case_and_omits_absent_optional_keys() -> None:
    assert header().to_json() == (
        '{"version":1,"id":"s1","cwd":"/home/me","createdAt":1767225600000,'
        '"origin":{"kind":"web"},"lineage":null}'
    )
    forked = header(
        origin={"kind": "fork"},
        lineage={"parentId": "p", "forkedAt": 2},
        delegationDepth=1,
        seedLength=3,
    )
    assert json.loads(forked.to_json()) == {
        **HEADER,
        "origin": {"kind": "fork"},
        "lineage": {"parentId": "p", "forkedAt": 2},
        "delegationDepth": 1,
        "seedLength": 3,
    }
    assert forked.to_dict() == json.loads(forked.to_json())


@given(
    session_id=session_ids,
    cwd=st.text(),
    created_at=st.integers(),
    kind=st.sampled_from(["web", "cli", "fork", "api"]),
    lineage=st.none() | st.tuples(session_ids, st.integers(min_value=0)),
    depth=st.none() | st.integers(min_value=0),
    seed_length=st.none() | st.integers(min_value=0),
)
def test_header_serialise_parse_serialise_gives_identical_bytes(
    session_id: str,
    cwd: str,
    created_at: int,
    kind: str,
    lineage: tuple[str, int] | None,
    depth: int | None,
    seed_length: int | None,
) -> None:
    value: dict[str, Any] = {
        "version": 1,
        "id": session_id,
        "cwd": cwd,
        "createdAt": created_at,
        "origin": {"kind": kind},
        "lineage": None if lineage is None else {"parentId": lineage[0], "forkedAt": lineage[1]},
    }
    if depth is not None:
        value["delegationDepth"] = depth
    if seed_length is not None:
        value["seedLength"] = seed_length
    first = SessionHeader.model_validate(value).to_json()
    assert json.loads(first) == value
    assert SessionHeader.from_json(first).to_json() == first


@pytest.mark.parametrize(
    "changes",
    [
        {"extra": 1},
        {"version": 2},
        {"version": True},
        {"version": 1.0},
        {"createdAt": "1"},
        {"createdAt": 1.0},
        {"origin": {"kind": "email"}},
        {"origin": {"kind": "web", "more": 1}},
        {"lineage": {"parentId": "p"}},
        {"lineage": {"parentId": "p", "forkedAt": -1}},
        {"lineage": {"parentId": "../p", "forkedAt": 0}},
        {"lineage": {"parent_id": "p", "forked_at": 0}},
        {"delegationDepth": -1},
        {"delegationDepth": None},
        {"seedLength": "3"},
    ],
)
def test_header_parsing_is_strict(changes: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SessionHeader.from_json(json.dumps({**HEADER, **changes}))


def test_header_rejects_snake_case_keys_and_a_missing_lineage() -> None:
    snake = {key: value for key, value in HEADER.items() if key != "createdAt"}
    with pytest.raises(ValidationError):
        SessionHeader.model_validate({**snake, "created_at": 1})
    with pytest.raises(ValidationError):
        SessionHeader.model_validate({k: v for k, v in HEADER.items() if k != "lineage"})


BAD_IDS = ["", "../x", "..", "a/b", "/etc", "-a", "_a", "a b", "a.b", "é", "a\n", "x" * 65]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_session_ids_are_rejected_everywhere(bad: str) -> None:
    with pytest.raises(InvalidSessionId) as info:
        validate_session_id(bad)
    assert repr(bad) in str(info.value)
    assert info.value.value == bad
    with pytest.raises(ValidationError):
        header(id=bad)
    with pytest.raises(InvalidSessionId):
        Session.new(bad, cwd="/", created_at=0)


@pytest.mark.parametrize("good", ["a", "Z9", "0_-", "x" * 64])
def test_good_session_ids_are_returned_unchanged(good: str) -> None:
    assert validate_session_id(good) == good
    assert header(id=good).id == good


def test_a_non_string_session_id_is_rejected() -> None:
    with pytest.raises(InvalidSessionId):
        validate_session_id(7)  # type: ignore[arg-type]


def test_header_is_frozen() -> None:
    with pytest.raises(ValidationError):
        header().cwd = "/elsewhere"


def test_canonical_writes_an_absent_delegation_depth_as_zero() -> None:
    plain = header()
    assert plain.delegation_depth is None
    assert plain.depth == 0
    assert plain.canonical().delegation_depth == 0
    assert json.loads(plain.canonical().to_json())["delegationDepth"] == 0
    assert header(delegationDepth=2).canonical().delegation_depth == 2


def test_identity_equals_treats_absent_depth_as_zero_and_everything_else_exactly() -> None:
    plain = header()
    assert plain.identity_equals(header(delegationDepth=0))
    assert header(delegationDepth=0).identity_equals(plain)
    assert not plain.identity_equals(header(delegationDepth=1))
    assert not plain.identity_equals(header(cwd="/other"))
    assert not plain.identity_equals(header(createdAt=1))
    assert not plain.identity_equals(header(origin={"kind": "cli"}))
    assert not plain.identity_equals(header(seedLength=1))


# -- Session --------------------------------------------------------------------


def test_new_session_is_empty_with_a_plain_header() -> None:
    session = Session.new("s1", cwd="/w", created_at=9, origin="cli", delegation_depth=2)
    assert len(session) == 0
    assert list(session.events) == []
    assert session.id == "s1"
    assert session.header == SessionHeader(
        version=1,
        id="s1",
        cwd="/w",
        createdAt=9,
        origin=Origin(kind="cli"),
        lineage=None,
        delegationDepth=2,
    )
    assert session.fold_start == 0
    assert "s1" in repr(session) and "len=0" in repr(session)


def test_session_rejects_events_whose_seq_is_not_their_position() -> None:
    with pytest.raises(ValueError, match="position 1 has seq 2"):
        Session(header(), [event(0), event(2)])


def test_session_events_are_a_live_read_only_view() -> None:
    session = Session(header(), [event(0)])
    view = session.events
    assert not hasattr(view, "append")
    with pytest.raises(TypeError):
        view[0] = event(0)  # type: ignore[index]
    session._append("message/user", {"text": "x"}, 7)
    assert len(view) == 2
    assert view[1] == event(1, data={"text": "x"}, time=7)
    assert list(view[0:1]) == [event(0)]
    assert [item.seq for item in view] == [0, 1]


def test_session_equality_is_identity() -> None:
    first = Session(header())
    second = Session(header())
    assert first != second
    assert first == first
    assert len({first, second}) == 2


def test_fork_copies_the_prefix_unchanged_then_ends_the_seed() -> None:
    parent_events = [event(i, data={"i": i}, time=100 + i) for i in range(4)]
    parent = Session(header(id="parent", delegationDepth=1), parent_events)
    child = Session.fork(parent.header, parent.events, "child", at=2, created_at=999)

    assert list(child.events[:2]) == parent_events[:2]
    assert child.events[2] == SessionEvent(seq=2, type=END_SEED, time=999, data={})
    assert len(child) == 3
    assert child.header.seed_length == 3
    assert child.header.lineage == Lineage(parentId="parent", forkedAt=2)
    assert child.header.origin.kind == "fork"
    assert child.header.cwd == parent.header.cwd
    assert child.header.created_at == 999
    assert child.fold_start == 3
    assert len(parent) == 4


@pytest.mark.parametrize("at", [0, 4])
def test_fork_at_either_end_is_allowed(at: int) -> None:
    parent = Session(header(), [event(i) for i in range(4)])
    child = Session.fork(parent.header, parent.events, "child", at=at, created_at=1)
    assert len(child) == at + 1
    assert child.header.seed_length == at + 1
    assert child.events[at].type == END_SEED


@pytest.mark.parametrize("at", [-1, 5])
def test_fork_outside_the_parent_is_rejected(at: int) -> None:
    parent = Session(header(), [event(i) for i in range(4)])
    with pytest.raises(ValueError, match="cannot fork"):
        Session.fork(parent.header, parent.events, "child", at=at, created_at=1)


def test_fork_validates_the_child_id() -> None:
    with pytest.raises(InvalidSessionId):
        Session.fork(header(), [], "../child", at=0, created_at=1)


def test_resume_rebuilds_the_stored_log_and_appends_an_end_seed() -> None:
    stored_header = header(delegationDepth=0)
    stored = [event(0), event(1, type=END_SEED, data={}), event(2)]
    first = Session.resume(stored_header, stored, resumed_at=50)
    second = Session.resume(stored_header, stored, resumed_at=60)

    assert first.header is stored_header
    assert list(first.events[:3]) == stored
    assert first.events[3] == SessionEvent(seq=3, type=END_SEED, time=50, data={})
    assert first.fold_start == 0
    assert first is not second
    assert second.events[3].time == 60


def test_a_resume_retried_after_its_marker_was_stored_does_not_append_a_second() -> None:
    stored = [event(0), SessionEvent(seq=1, type=END_SEED, time=50, data={})]
    retried = Session.resume(header(), stored, resumed_at=60, marker=stored[1])
    assert list(retried.events) == stored
    # Any other marker at the end (an earlier lifecycle) gets a new one after it.
    other = SessionEvent(seq=1, type=END_SEED, time=49, data={})
    assert len(Session.resume(header(), stored, resumed_at=60, marker=other)) == 3
    assert len(Session.resume(header(), stored, resumed_at=60)) == 3
    assert len(Session.resume(header(), [], resumed_at=60, marker=other)) == 1


def test_resumed_fork_still_folds_from_its_seed_length() -> None:
    forked = Session.fork(header(), [event(0)], "child", at=1, created_at=3)
    resumed = Session.resume(forked.header, forked.events, resumed_at=4)
    assert resumed.fold_start == 2
    assert resumed.events[2].type == END_SEED


def test_in_python_a_none_optional_field_means_absent() -> None:
    value = header(delegationDepth=None, seedLength=None)
    assert value.to_json() == header().to_json()


# -- SessionLog -----------------------------------------------------------------


def typed_session() -> Session:
    types = ["message/user", "schedule/change", "turn/end", "schedule/change", "message/user"]
    return Session(header(), [event(seq, type) for seq, type in enumerate(types)])


def test_a_session_is_a_session_log() -> None:
    assert isinstance(typed_session(), SessionLog)


def test_event_returns_one_event_and_refuses_seqs_outside_the_log() -> None:
    session = typed_session()
    assert session.event(3).type == "schedule/change"
    with pytest.raises(IndexError, match="no event 5"):
        session.event(5)
    with pytest.raises(IndexError):
        session.event(-1)


def test_scan_yields_a_range_oldest_first_or_reversed() -> None:
    session = typed_session()
    assert [item.seq for item in session.scan()] == [0, 1, 2, 3, 4]
    assert [item.seq for item in session.scan(1, 4)] == [1, 2, 3]
    assert [item.seq for item in session.scan(3, 99, reverse=True)] == [4, 3]
    assert [item.seq for item in session.scan(-5, 1)] == [0]


def test_scan_by_type_visits_only_matching_events_within_the_range() -> None:
    session = typed_session()
    assert [item.seq for item in session.scan(types={"schedule/change"})] == [1, 3]
    assert [item.seq for item in session.scan(2, types=["schedule/change"])] == [3]
    both = session.scan(types=("message/user", "schedule/change"), reverse=True)
    assert [item.seq for item in both] == [4, 3, 1, 0]
    assert list(session.scan(types=())) == []
    assert list(session.scan(types={"absent/type"})) == []


def test_scan_by_type_sees_events_appended_later() -> None:
    session = typed_session()
    session._append("schedule/change", {}, 9)
    assert [item.seq for item in session.scan(types={"schedule/change"})] == [1, 3, 5]


def test_a_prefix_reads_only_the_first_events_and_follows_the_session() -> None:
    session = Session.new("s1", cwd="/", created_at=1)
    for index in range(3):
        session._append("test/a" if index % 2 == 0 else "test/b", {"i": index}, index)
    prefix = session.prefix(2)

    assert (prefix.id, prefix.header, prefix.fold_start, len(prefix)) == (
        "s1",
        session.header,
        0,
        2,
    )
    assert [event.seq for event in prefix.scan()] == [0, 1]
    assert [event.seq for event in prefix.scan(types={"test/a"})] == [0]
    assert [event.seq for event in prefix.scan(0, 10, reverse=True)] == [1, 0]
    assert prefix.event(1).data == {"i": 1}
    with pytest.raises(IndexError, match="no event 2 in its first 2"):
        prefix.event(2)
    assert "first 2 events of" in repr(prefix)
    assert isinstance(prefix, SessionLog)
    assert len(session.prefix(10)) == 3
    with pytest.raises(ValueError, match="at least 0"):
        session.prefix(-1)


def test_a_fork_keeps_the_parent_s_delegation_depth() -> None:
    parent = Session.new("p1", cwd="/", created_at=1, delegation_depth=2)

    child = Session.fork(parent.header, list(parent.events), "c1", at=0, created_at=2)

    assert child.header.delegation_depth == 2
    assert (
        Session.fork(
            Session.new("p2", cwd="/", created_at=1).header, [], "c2", at=0, created_at=2
        ).header.delegation_depth
        is None
    )


# -- the compact event (issue 20) ---------------------------------------------------


def test_an_event_holds_its_data_as_the_canonical_bytes_it_is_stored_in() -> None:
    item = event(4, data={"b": [1.5, None, True], "a": "é"})
    assert item.data_json == b'{"b":[1.5,null,true],"a":"\xc3\xa9"}'
    assert item.to_bytes() == item.to_json().encode()
    assert item.to_dict() == {
        "seq": 4,
        "type": "message/user",
        "time": 5,
        "data": {"b": [1.5, None, True], "a": "é"},
    }
    assert hash(item) == hash(event(4, data={"b": [1.5, None, True], "a": "é"}))
    assert item != event(4, data={"b": [1.5, None, True], "a": "e"})
    assert item != "an event"
    assert "message/user" in repr(item) and '"a":"é"' in repr(item)
    assert "..." in repr(event(0, data="x" * 200))


def test_an_event_survives_pickling_unchanged() -> None:
    import pickle

    item = event(2, data={"k": [1, 2]})
    assert pickle.loads(pickle.dumps(item)) == item


def test_replace_validates_what_changes() -> None:
    item = event(1, data={"x": 1})
    assert item.replace(seq=7).seq == 7
    assert item.replace(seq=7).data == {"x": 1}
    assert item.replace(data=[2]).data == [2]
    with pytest.raises(ValidationError):
        item.replace(seq=-1)
    with pytest.raises(ValidationError):
        item.replace(type="Bad")
    with pytest.raises(ValidationError):
        item.replace(time="now")
    with pytest.raises(ValidationError):
        item.replace(data=float("nan"))
    with pytest.raises(TypeError, match="no field 'colour'"):
        item.replace(colour="red")


def test_every_problem_is_named_with_its_field() -> None:
    with pytest.raises(ValidationError) as info:
        SessionEvent(seq=-1, type=7, time=1.5, data={1: 2})  # type: ignore[arg-type]
    fields = {error["loc"][0] for error in info.value.errors()}
    assert fields == {"seq", "type", "time", "data"}
    with pytest.raises(ValidationError) as parsed:
        SessionEvent.from_json('{"seq":0,"type":"a/b","time":1,"data":1,"more":2,"x":3}')
    assert [error["loc"] for error in parsed.value.errors()] == [("more",), ("x",)]
    with pytest.raises(ValidationError, match="expected a JSON object"):
        SessionEvent.from_json("[1]")


def test_fields_passed_in_order_are_the_same_event_and_checked_the_same() -> None:
    in_order = SessionEvent(3, "message/user", 1_000, {"text": "hi"})
    assert in_order == SessionEvent(seq=3, type="message/user", time=1_000, data={"text": "hi"})
    assert in_order.to_json() == '{"seq":3,"type":"message/user","time":1000,"data":{"text":"hi"}}'
    with pytest.raises(ValidationError) as info:
        SessionEvent(-1, "not a type", 1.5, {"x": float("nan")})  # type: ignore[arg-type]
    assert {error["loc"][0] for error in info.value.errors()} == {"seq", "type", "time", "data"}


def test_a_session_append_checks_every_event_it_builds() -> None:
    session = Session.new("s1", cwd="/", created_at=0)
    with pytest.raises(ValidationError):
        session._append("message/user", {"x": float("inf")}, 1)
    with pytest.raises(ValidationError):
        session._append("Not/A Type", {}, 1)
    assert len(session) == 0
    event = session._append("message/user", {"x": 1}, 5)
    assert (event.seq, event.type, event.time, event.data) == (0, "message/user", 5, {"x": 1})


@pytest.mark.parametrize(
    "line",
    [
        '{"seq": 0, "type": "a/b", "time": 1, "data": {"x": 1.0E2}}',  # spaces, exponent
        '{"type":"a/b","seq":0,"time":1,"data":"\\u00e9"}',  # another key order, an escape
        '{"seq":0,"type":"a/b","time":1,"data":{"x":1} }',
    ],
)
def test_a_line_written_some_other_way_reads_as_its_canonical_form(line: str) -> None:
    parsed = SessionEvent.from_json(line)
    assert SessionEvent.from_json(parsed.to_json()) == parsed
    assert parsed.data == json.loads(line)["data"]


def test_a_canonical_line_reads_back_to_identical_bytes_on_the_fast_path() -> None:
    line = '{"seq":12,"type":"schedule/change","time":-3,"data":{"x":[1,2.5,"Infinity"]}}'
    assert SessionEvent.from_json(line).to_json() == line
    assert SessionEvent.from_json(line.encode()).to_json() == line
    # A canonical-looking prefix with data that does not prove canonical falls back.
    with pytest.raises(ValidationError):
        SessionEvent.from_json('{"seq":0,"type":"a/b","time":1,"data":[1e400]}')
    with pytest.raises(ValidationError):
        SessionEvent.from_json('{"seq":0,"type":"a/' + "b" * 127 + '","time":1,"data":1}')


def test_new_data_is_bounded_by_depth_and_size() -> None:
    from dsh.base.limits import MAX_EVENT_BYTES, MAX_EVENT_DEPTH

    deep: Any = 0
    for _ in range(MAX_EVENT_DEPTH):
        deep = [deep]
    assert event(0, data=deep).data == deep
    with pytest.raises(ValidationError, match=f"nested more than {MAX_EVENT_DEPTH} levels"):
        event(0, data=[deep])
    with pytest.raises(ValidationError, match="more than the limit of"):
        event(0, data="x" * MAX_EVENT_BYTES)
