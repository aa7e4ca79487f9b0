"""The contract every persistence `Backend` keeps (DESIGN §4).

A backend's test module subclasses `BackendContract` and provides the
`backend` fixture (and `reopen` if its data outlives the object). Nothing here
knows how a backend stores things; see `test_jsonl.py` for the format itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import anyio
import pytest

from dsh.persistence import Backend, StoredSummary
from dsh.persistence.errors import IntegrityError, SessionExists, SessionNotFound
from dsh.session.errors import InvalidSessionId
from dsh.session.event import SessionEvent
from dsh.session.facts import PREVIEW_LIMIT, without_bidi
from dsh.session.header import Lineage, SessionHeader
from dsh.session.log import Session

CREATED_AT = 1_767_225_600_000


def header(session_id: str = "s1", **changes: Any) -> SessionHeader:
    return SessionHeader.model_validate(
        {
            "version": 1,
            "id": session_id,
            "cwd": "/home/me",
            "createdAt": CREATED_AT,
            "origin": {"kind": "web"},
            "lineage": None,
            **changes,
        }
    )


def events(start: int, stop: int, **data: Any) -> list[SessionEvent]:
    return [
        SessionEvent(
            seq=seq,
            type="message/user",
            time=CREATED_AT + seq,
            data={"text": f"message {seq} ✓", "n": seq, **data},
        )
        for seq in range(start, stop)
    ]


class BackendContract:
    """Tests every backend must pass. Subclasses provide the `backend` fixture."""

    pytestmark = pytest.mark.anyio

    async def reopen(self, backend: Backend) -> Backend:
        """A fresh backend object over the same storage (the same one if it is volatile)."""
        return backend

    async def test_a_created_session_holds_exactly_its_prefix(self, backend: Backend) -> None:
        prefix = events(0, 3)
        await backend.initialize(header(), prefix)
        stored = await backend.inspect("s1")
        assert stored is not None
        assert stored.header.identity_equals(header())
        assert stored.events == tuple(prefix)
        assert stored.torn_tail is False
        assert await backend.cursor("s1") == 3

    async def test_any_text_a_person_or_model_writes_is_stored_and_listed(
        self, backend: Backend
    ) -> None:
        # NUL, controls, a lone surrogate's escape, bidi overrides: every field a person
        # or a model controls, in the first batch and in a later one (a title too).
        odd = "a\x00b\x01\x1b[2K\x7f\u202eevil\u2028end"
        person = {"text": odd, "source": {"kind": "user"}}
        first = [SessionEvent(seq=0, type="message/user", time=CREATED_AT, data=person)]
        later = [
            SessionEvent(seq=1, type="session/title", time=CREATED_AT + 1, data={"title": odd}),
            SessionEvent(seq=2, type="message/assistant", time=CREATED_AT + 2, data={"text": odd}),
            SessionEvent(seq=3, type="tool/result", time=CREATED_AT + 3, data={"value": odd}),
        ]
        await backend.initialize(header(), first)
        await backend.append("s1", later)
        stored = await self.reopen(backend)
        found = await stored.inspect("s1")
        assert found is not None and found.events == tuple(first + later)
        (row,) = await stored.list()
        summary = await stored.summary("s1")
        assert summary is not None and summary == row and row.length == 4
        first_line = odd.split("\u2028")[0]  # a preview is the message's first line
        # The list's facts drop bidi controls (the events above keep them).
        for shown, text in ((row.title, odd), (row.preview, first_line)):
            text = without_bidi(text)
            # A store that cannot hold NUL in a column shows U+FFFD there; nothing else moves.
            assert shown in (text, text.replace("\x00", "\ufffd")), shown
        assert row.updated_at is not None

    async def test_the_header_is_stored_canonically(self, backend: Backend) -> None:
        await backend.initialize(header(), [])
        stored = await backend.inspect("s1")
        assert stored is not None
        assert stored.header == header(delegationDepth=0)
        assert await backend.cursor("s1") == 0

    async def test_creating_an_existing_session_is_refused_and_changes_nothing(
        self, backend: Backend
    ) -> None:
        await backend.initialize(header(), events(0, 2))
        with pytest.raises(SessionExists, match="s1"):
            await backend.initialize(header(cwd="/other"), events(0, 5))
        stored = await backend.inspect("s1")
        assert stored is not None
        assert stored.header.cwd == "/home/me"
        assert stored.events == tuple(events(0, 2))

    async def test_a_prefix_must_be_numbered_from_zero(self, backend: Backend) -> None:
        with pytest.raises(IntegrityError):
            await backend.initialize(header(), events(1, 3))
        with pytest.raises(IntegrityError):
            await backend.initialize(header(), [*events(0, 1), *events(2, 3)])
        assert await backend.cursor("s1") is None

    async def test_appends_continue_at_the_cursor(self, backend: Backend) -> None:
        await backend.initialize(header(), events(0, 2))
        await backend.append("s1", events(2, 3))
        await backend.append("s1", events(3, 10))
        assert await backend.cursor("s1") == 10
        stored = await backend.inspect("s1")
        assert stored is not None
        assert stored.events == tuple(events(0, 10))

    @pytest.mark.parametrize(("start", "stop"), [(1, 3), (3, 4), (0, 2), (2, 2)])
    async def test_a_batch_not_starting_at_the_cursor_stores_nothing(
        self, backend: Backend, start: int, stop: int
    ) -> None:
        await backend.initialize(header(), events(0, 2))
        batch = events(start, stop) or [events(5, 6)[0]]
        with pytest.raises(IntegrityError) as info:
            await backend.append("s1", batch)
        assert info.value.expected == 2
        assert "s1" in str(info.value)
        assert await backend.cursor("s1") == 2

    async def test_a_batch_with_a_gap_stores_nothing(self, backend: Backend) -> None:
        await backend.initialize(header(), events(0, 2))
        with pytest.raises(IntegrityError):
            await backend.append("s1", [*events(2, 4), *events(5, 6)])
        assert await backend.cursor("s1") == 2
        await backend.append("s1", events(2, 3))
        assert await backend.cursor("s1") == 3

    async def test_an_empty_batch_does_nothing(self, backend: Backend) -> None:
        await backend.initialize(header(), events(0, 1))
        await backend.append("s1", [])
        assert await backend.cursor("s1") == 1

    async def test_appending_to_an_unknown_session_is_refused(self, backend: Backend) -> None:
        with pytest.raises(SessionNotFound, match="s1"):
            await backend.append("s1", events(0, 1))
        assert await backend.cursor("s1") is None

    async def test_unknown_sessions_read_as_none(self, backend: Backend) -> None:
        assert await backend.cursor("nobody") is None
        assert await backend.inspect("nobody") is None
        assert await backend.list() == []

    async def test_list_summarises_every_session_sorted_by_id(self, backend: Backend) -> None:
        parent = Session(header("b-parent"), events(0, 2))
        child = Session.fork(parent.header, parent.events, "a-child", at=1, created_at=7)
        await backend.initialize(parent.header, parent.events)
        await backend.initialize(child.header, child.events)
        await backend.append("a-child", [child.events[0].replace(seq=2)])
        listed = await backend.list()
        # When it last grew: its last event's time, or (a file) its last write's.
        assert all(isinstance(row.updated_at, int) for row in listed)
        assert [dataclasses.replace(row, updated_at=None) for row in listed] == [
            StoredSummary(
                id="a-child",
                created_at=7,
                length=3,
                lineage=Lineage(parentId="b-parent", forkedAt=1),
            ),
            StoredSummary(id="b-parent", created_at=CREATED_AT, length=2, lineage=None),
        ]

    async def test_stored_data_round_trips_exactly(self, backend: Backend) -> None:
        odd: list[Any] = [
            {"nested": {"list": [1, 2.5, -0.0, None, True, "ü\n\u2028\"'"]}},
            2**70,
            "",
            [],
            {},
            1e-300,
        ]
        batch = [
            SessionEvent(seq=seq, type="plugin.x/odd-type_1", time=-seq, data=value)
            for seq, value in enumerate(odd)
        ]
        await backend.initialize(header(), batch[:1])
        await backend.append("s1", batch[1:])
        stored = await (await self.reopen(backend)).inspect("s1")
        assert stored is not None
        assert [event.to_json() for event in stored.events] == [e.to_json() for e in batch]

    @pytest.mark.parametrize("bad", ["", "../escape", "..", "a/b", "/abs", "x" * 65, "a\n"])
    async def test_invalid_ids_are_rejected_before_storage_is_touched(
        self, backend: Backend, bad: str
    ) -> None:
        for call in (backend.cursor, backend.inspect, backend.release):
            with pytest.raises(InvalidSessionId):
                await call(bad)
        with pytest.raises(InvalidSessionId):
            await backend.append(bad, events(0, 1))
        with pytest.raises(InvalidSessionId):
            await backend.initialize(header().model_copy(update={"id": bad}), [])
        assert await backend.list() == []

    async def test_a_reopened_backend_sees_everything_and_continues(self, backend: Backend) -> None:
        await backend.initialize(header(), events(0, 2))
        await backend.append("s1", events(2, 4))
        again = await self.reopen(backend)
        assert await again.cursor("s1") == 4
        await again.append("s1", events(4, 5))
        stored = await again.inspect("s1")
        assert stored is not None
        assert stored.events == tuple(events(0, 5))

    async def test_release_and_aclose_keep_the_data_and_allow_more_appends(
        self, backend: Backend
    ) -> None:
        await backend.initialize(header(), events(0, 1))
        await backend.release("s1")
        await backend.release("s1")
        await backend.release("never-written")
        await backend.append("s1", events(1, 2))
        await backend.aclose()
        await backend.append("s1", events(2, 3))
        assert await backend.cursor("s1") == 3

    async def test_sessions_are_written_concurrently_without_mixing(self, backend: Backend) -> None:
        ids = [f"c{number}" for number in range(8)]

        async def write(session_id: str) -> None:
            await backend.initialize(header(session_id), [])
            for start in range(0, 20, 5):
                await backend.append(session_id, events(start, start + 5, who=session_id))

        async with anyio.create_task_group() as group:
            for session_id in ids:
                group.start_soon(write, session_id)
        for session_id in ids:
            stored = await backend.inspect(session_id)
            assert stored is not None
            assert stored.events == tuple(events(0, 20, who=session_id))
        assert [summary.length for summary in await backend.list()] == [20] * 8

    # -- ranged reads (second edition) ------------------------------------------

    async def test_header_and_cursor_describe_the_log_without_its_events(
        self, backend: Backend
    ) -> None:
        assert await backend.header("s1") is None
        await backend.initialize(header(), events(0, 3))
        assert await backend.header("s1") == header(delegationDepth=0)
        await backend.append("s1", events(3, 5))
        assert await (await self.reopen(backend)).header("s1") == header(delegationDepth=0)
        assert await backend.cursor("s1") == 5

    async def test_a_ranged_read_returns_exactly_the_events_asked_for(
        self, backend: Backend
    ) -> None:
        await backend.initialize(header(), events(0, 4))
        await backend.append("s1", events(4, 10))
        assert await backend.read("s1", 2, 5) == events(2, 5)
        assert await backend.read("s1") == events(0, 10)
        assert await backend.read("s1", 7) == events(7, 10)
        assert await backend.read("s1", 8, 100) == events(8, 10)
        assert await backend.read("s1", 10, 20) == []
        assert await backend.read("s1", 5, 5) == []
        assert await backend.read("s1", 6, 2) == []
        again = await self.reopen(backend)
        assert await again.read("s1", 3, 4) == events(3, 4)

    async def test_a_ranged_read_can_keep_only_some_types(self, backend: Backend) -> None:
        mixed = [
            SessionEvent(seq=seq, type=kind, time=seq, data={"n": seq})
            for seq, kind in enumerate(["a/x", "b/y", "a/x", "c/z", "b/y", "a/x"])
        ]
        await backend.initialize(header(), mixed[:2])
        await backend.append("s1", mixed[2:])
        assert await backend.read("s1", types={"a/x"}) == [mixed[0], mixed[2], mixed[5]]
        assert await backend.read("s1", 1, 5, types=["b/y", "c/z"]) == [
            mixed[1],
            mixed[3],
            mixed[4],
        ]
        assert await backend.read("s1", 3, types={"a/x"}) == [mixed[5]]
        assert await backend.read("s1", types={"none/such"}) == []
        assert await backend.read("s1", types=()) == []

    async def test_reading_what_is_not_stored_is_refused(self, backend: Backend) -> None:
        with pytest.raises(SessionNotFound, match="s1"):
            await backend.read("s1", 0, 1)
        await backend.initialize(header(), events(0, 1))
        with pytest.raises(ValueError, match="start"):
            await backend.read("s1", -1, 1)

    async def test_inspect_names_the_mark_of_exactly_what_it_read(self, backend: Backend) -> None:
        await backend.initialize(header(), events(0, 2))
        first = await backend.inspect("s1")
        assert first is not None and first.mark == await backend.mark("s1")
        assert first.mark is not None and first.mark.length == 2
        await backend.append("s1", events(2, 5))
        second = await backend.inspect("s1")
        assert second is not None and second.mark == await backend.mark("s1")
        assert second.mark is not None and second.mark.length == len(second.events) == 5

    async def test_the_mark_counts_events_and_keeps_its_incarnation_across_appends(
        self, backend: Backend
    ) -> None:
        assert await backend.mark("s1") is None
        await backend.initialize(header(), events(0, 2))
        first = await backend.mark("s1")
        assert first is not None and first.length == 2
        await backend.append("s1", events(2, 5))
        second = await backend.mark("s1")
        assert second is not None and second.length == 5
        if first.incarnation is not None:
            assert second.incarnation == first.incarnation

    async def test_list_shows_the_latest_title_and_the_first_message_of_the_person(
        self, backend: Backend
    ) -> None:
        def event(seq: int, kind: str, data: Any) -> SessionEvent:
            return SessionEvent(seq=seq, type=kind, time=seq, data=data)

        greeting = {"text": "\n  Hello there  \nline 2", "source": {"kind": "user"}}
        log = [
            event(0, "message/user", {"text": "from a plugin", "source": {"kind": "schedule"}}),
            event(1, "session/title", {"title": "First"}),
            event(2, "message/user", greeting),
            event(3, "message/user", {"text": "later", "source": {"kind": "user"}}),
        ]
        await backend.initialize(header(), log[:2])
        await backend.append("s1", log[2:])
        summary = (await backend.list())[0]
        assert (summary.title, summary.preview) == ("First", "Hello there")
        await backend.append("s1", [event(4, "session/title", {"title": "Renamed"})])
        summary = (await (await self.reopen(backend)).list())[0]
        assert (summary.title, summary.preview, summary.length) == ("Renamed", "Hello there", 5)
        await backend.append("s1", [event(5, "session/title", {"title": 7})])
        assert (await backend.list())[0].title is None

    async def test_a_preview_is_cut_to_its_limit(self, backend: Backend) -> None:
        text = "x" * (PREVIEW_LIMIT + 50)
        message = SessionEvent(
            seq=0, type="message/user", time=1, data={"text": text, "source": {"kind": "user"}}
        )
        await backend.initialize(header(), [message])
        summary = (await backend.list())[0]
        assert summary.preview == "x" * PREVIEW_LIMIT
        assert summary.title is None

    # -- the trash ------------------------------------------------------------------

    async def test_a_trashed_session_is_gone_until_it_is_restored_unchanged(
        self, backend: Backend
    ) -> None:
        await backend.initialize(header(), events(0, 3))
        await backend.initialize(header("s2"), events(0, 1))
        await backend.trash("s1")
        assert [summary.id for summary in await backend.list()] == ["s2"]
        assert await backend.cursor("s1") is None
        assert await backend.inspect("s1") is None
        assert await backend.header("s1") is None
        assert await backend.mark("s1") is None
        with pytest.raises(SessionNotFound):
            await backend.read("s1")
        with pytest.raises(SessionNotFound):
            await backend.append("s1", events(3, 4))
        await backend.restore("s1")
        assert [summary.id for summary in await backend.list()] == ["s1", "s2"]
        assert await backend.read("s1") == events(0, 3)
        await backend.append("s1", events(3, 4))
        assert await (await self.reopen(backend)).cursor("s1") == 4

    async def test_trash_and_restore_refuse_what_they_cannot_do(self, backend: Backend) -> None:
        with pytest.raises(SessionNotFound, match="s1"):
            await backend.trash("s1")
        with pytest.raises(SessionNotFound, match="s1"):
            await backend.restore("s1")
        await backend.initialize(header(), events(0, 1))
        await backend.trash("s1")
        await backend.initialize(header(), events(0, 2))  # a new Session under the same id
        with pytest.raises(SessionExists, match="s1"):
            await backend.restore("s1")
        with pytest.raises(SessionExists, match="trash"):
            await backend.trash("s1")
        assert await backend.cursor("s1") == 2
        for call in (backend.trash, backend.restore):
            with pytest.raises(InvalidSessionId):
                await call("../s1")

    async def test_the_trash_is_listed_and_read_as_it_was_stored(self, backend: Backend) -> None:
        assert await backend.trashed() == []
        await backend.initialize(header("s2"), events(0, 2))
        await backend.initialize(header(), events(0, 3))
        await backend.trash("s2")
        await backend.trash("s1")
        await backend.initialize(header(), events(0, 1))  # a new Session under the same id
        assert await backend.trashed() == ["s1", "s2"]
        stored = await backend.inspect_trashed("s1")
        assert stored is not None and stored.header == header(delegationDepth=0)
        assert_events(stored.events, events(0, 3))
        assert await backend.inspect_trashed("s3") is None
        assert await backend.cursor("s1") == 1  # the stored one is another log
        await backend.restore("s2")
        assert await backend.trashed() == ["s1"]
        assert await backend.inspect_trashed("s2") is None
        assert await (await self.reopen(backend)).trashed() == ["s1"]
        with pytest.raises(InvalidSessionId):
            await backend.inspect_trashed("../s1")

    async def test_a_restored_session_has_a_new_incarnation(self, backend: Backend) -> None:
        await backend.initialize(header(), events(0, 1))
        before = await backend.mark("s1")
        await backend.trash("s1")
        await backend.restore("s1")
        after = await backend.mark("s1")
        assert before is not None and after is not None and after.length == 1
        if before.incarnation is not None:
            assert after.incarnation != before.incarnation


def assert_events(stored: Sequence[SessionEvent], expected: Sequence[SessionEvent]) -> None:
    assert [event.to_json() for event in stored] == [event.to_json() for event in expected]
