from __future__ import annotations

import logging

import anyio
import pytest
from pydantic import ValidationError

from dsh.session.errors import FlushError, SessionClosed
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions, Observation, SessionEventObserved, SessionFlushed
from dsh.session.log import Session
from dsh.testing import FakeClock
from tests.support.deadlines import WAIT

pytestmark = pytest.mark.anyio


class Listener:
    """A scriptable listener: records appends, answers flushes with `result`."""

    def __init__(self, result: bool | None = True) -> None:
        self.result = result
        self.appended: list[int] = []
        self.flushes = 0

    def on_append(self, session: Session, event: SessionEvent) -> None:
        self.appended.append(event.seq)

    async def flush(self, session: Session) -> bool | None:
        self.flushes += 1
        await anyio.lowlevel.checkpoint()
        return self.result


class Boom(Exception):
    pass


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(wall_ms=1_000)


@pytest.fixture
def live(clock: FakeClock) -> LiveSessions:
    return LiveSessions(clock)


@pytest.fixture
def session(live: LiveSessions) -> Session:
    session = Session.new("s1", cwd="/", created_at=0)
    live.open(session)
    return session


def observed(live: LiveSessions) -> list[Observation]:
    seen: list[Observation] = []
    live.observe(seen.append)
    return seen


def flushed(seen: list[Observation]) -> list[SessionFlushed]:
    return [item for item in seen if isinstance(item, SessionFlushed)]


# -- registry -----------------------------------------------------------------


async def test_opening_a_live_id_twice_is_refused(live: LiveSessions, session: Session) -> None:
    with pytest.raises(ValueError, match="already live"):
        live.open(Session.new("s1", cwd="/", created_at=0))
    with pytest.raises(ValueError, match="already live"):
        live.open(session)


async def test_get_find_and_live_see_only_open_sessions(
    live: LiveSessions, session: Session
) -> None:
    assert live.get("s1") is session
    assert live.find("s1") is session
    assert live.is_live(session)
    assert list(live.live()) == [session]
    with pytest.raises(SessionClosed, match="no live session 'nope'"):
        live.get("nope")
    assert live.find("nope") is None


async def test_open_returns_a_disposer_that_closes(live: LiveSessions) -> None:
    session = Session.new("s2", cwd="/", created_at=0)
    dispose = live.open(session)
    dispose()
    assert live.find("s2") is None
    assert not live.is_live(session)
    live.close(session)  # closing twice is harmless
    assert list(live.live()) == []


async def test_a_reopened_id_is_a_new_lifecycle_that_the_old_object_cannot_close(
    live: LiveSessions, session: Session
) -> None:
    old_listener = Listener()
    live.add_listener(session, old_listener)
    live.close(session)
    again = Session.new("s1", cwd="/", created_at=0)
    live.open(again)
    new_listener = Listener()
    live.add_listener(again, new_listener)
    live.close(session)
    assert live.get("s1") is again
    assert not live.is_live(session)
    with pytest.raises(SessionClosed):
        live.append(session, "message/user", {})
    with pytest.raises(SessionClosed):
        live.add_listener(session, Listener())
    assert not await live.flush(session)
    assert old_listener.appended == [] and new_listener.appended == []
    assert len(session) == 0

    live.append(again, "message/user", {})  # the live one still appends and is heard
    assert new_listener.appended == [0]
    assert old_listener.appended == []


async def test_a_closed_session_object_opened_again_appends_and_is_heard_again(
    live: LiveSessions, session: Session
) -> None:
    live.close(session)
    live.open(session)
    listener = Listener()
    live.add_listener(session, listener)

    live.append(session, "message/user", {})

    assert listener.appended == [0]


# -- append ---------------------------------------------------------------------


async def test_append_stamps_the_wall_clock_and_numbers_events(
    live: LiveSessions, session: Session, clock: FakeClock
) -> None:
    first = live.append(session, "message/user", {"text": "a"})
    clock.advance(2.5)
    second = live.append(session, "message/user", {"text": "b"})
    assert (first.seq, first.time) == (0, 1_000)
    assert (second.seq, second.time) == (1, 3_500)
    assert list(session.events) == [first, second]


async def test_append_notifies_listeners_in_order_then_publishes_the_event(
    live: LiveSessions, session: Session
) -> None:
    order: list[str] = []

    class Named(Listener):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

        def on_append(self, session: Session, event: SessionEvent) -> None:
            order.append(f"{self.name}:{event.seq}")

    live.add_listener(session, Named("a"))
    live.add_listener(session, Named("b"))
    live.observe(lambda item: order.append(f"observed:{type(item).__name__}"))
    event = live.append(session, "message/user", {})
    assert order == ["a:0", "b:0", "observed:SessionEventObserved"]
    assert event.seq == 0


async def test_an_invalid_append_changes_nothing_and_notifies_nobody(
    live: LiveSessions, session: Session
) -> None:
    listener = Listener()
    live.add_listener(session, listener)
    seen = observed(live)
    with pytest.raises(ValidationError):
        live.append(session, "not a type", {})
    with pytest.raises(ValidationError):
        live.append(session, "message/user", {"x": float("nan")})
    assert len(session) == 0
    assert listener.appended == []
    assert seen == []


async def test_append_to_a_closed_or_unknown_session_raises(
    live: LiveSessions, session: Session
) -> None:
    live.close(session)
    with pytest.raises(SessionClosed, match="s1"):
        live.append(session, "message/user", {})
    stranger = Session.new("s9", cwd="/", created_at=0)
    with pytest.raises(SessionClosed):
        live.append(stranger, "message/user", {})
    with pytest.raises(SessionClosed):
        live.add_listener(stranger, Listener())
    assert len(session) == 0


async def test_a_failing_append_listener_is_logged_and_the_others_still_hear(
    live: LiveSessions, session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Listener):
        def on_append(self, session: Session, event: SessionEvent) -> None:
            raise Boom("listener broke")

    healthy = Listener()
    live.add_listener(session, Broken())
    live.add_listener(session, healthy)
    seen = observed(live)
    with caplog.at_level(logging.ERROR, logger="dsh.session.live"):
        live.append(session, "message/user", {})
    assert healthy.appended == [0]
    assert len(seen) == 1
    assert "failed on append to s1" in caplog.text
    assert "listener broke" in caplog.text


# -- listeners and observers ------------------------------------------------------


async def test_removed_listeners_hear_nothing_more(live: LiveSessions, session: Session) -> None:
    listener = Listener()
    remove = live.add_listener(session, listener)
    live.append(session, "message/user", {})
    remove()
    remove()  # removing twice is harmless
    live.append(session, "message/user", {})
    assert await live.flush(session) is False
    assert listener.appended == [0]
    assert listener.flushes == 0


async def test_closing_drops_listeners_so_flush_acknowledges_nothing(
    live: LiveSessions, session: Session
) -> None:
    listener = Listener()
    remove = live.add_listener(session, listener)
    live.close(session)
    remove()  # the store already forgot it
    assert await live.flush(session) is False
    assert listener.flushes == 0


async def test_removed_observers_see_nothing_more(live: LiveSessions, session: Session) -> None:
    seen: list[Observation] = []
    remove = live.observe(seen.append)
    live.append(session, "message/user", {})
    remove()
    remove()
    live.append(session, "message/user", {})
    assert [type(item) for item in seen] == [SessionEventObserved]


async def test_a_failing_observer_is_contained_and_logged(
    live: LiveSessions, session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(item: Observation) -> None:
        raise Boom("observer broke")

    live.add_listener(session, Listener(True))
    live.observe(broken)
    seen = observed(live)
    with caplog.at_level(logging.ERROR, logger="dsh.session.live"):
        event = live.append(session, "message/user", {})
        assert await live.flush(session) is True
    assert seen == [SessionEventObserved(session, event), SessionFlushed(session, 1)]
    assert "failed on SessionEventObserved" in caplog.text
    assert "failed on SessionFlushed" in caplog.text
    assert "observer broke" in caplog.text


# -- flush (DESIGN §3) ---------------------------------------------------------------


async def test_flush_without_listeners_returns_false_and_publishes_nothing(
    live: LiveSessions, session: Session
) -> None:
    seen = observed(live)
    live.append(session, "message/user", {})
    assert await live.flush(session) is False
    assert flushed(seen) == []


async def test_flush_with_only_observe_only_listeners_returns_false(
    live: LiveSessions, session: Session
) -> None:
    first, second = Listener(None), Listener(None)
    live.add_listener(session, first)
    live.add_listener(session, second)
    seen = observed(live)
    assert await live.flush(session) is False
    assert (first.flushes, second.flushes) == (1, 1)
    assert flushed(seen) == []


@pytest.mark.parametrize("answer", [False, 1, "yes"])
async def test_only_a_literal_true_acknowledges_durability(
    live: LiveSessions, session: Session, answer: object
) -> None:
    live.add_listener(session, Listener(answer))  # type: ignore[arg-type]
    seen = observed(live)
    assert await live.flush(session) is False
    assert flushed(seen) == []


async def test_one_true_among_observers_acknowledges_and_publishes_once(
    live: LiveSessions, session: Session
) -> None:
    live.add_listener(session, Listener(None))
    live.add_listener(session, Listener(True))
    live.add_listener(session, Listener(None))
    live.append(session, "message/user", {})
    seen = observed(live)
    assert await live.flush(session) is True
    assert flushed(seen) == [SessionFlushed(session, 1)]


async def test_the_flushed_boundary_is_captured_at_entry_despite_racing_appends(
    live: LiveSessions, session: Session
) -> None:
    entered = anyio.Event()
    proceed = anyio.Event()

    class Slow(Listener):
        async def flush(self, session: Session) -> bool | None:
            entered.set()
            await proceed.wait()
            return True

    live.add_listener(session, Slow())
    live.append(session, "message/user", {})
    live.append(session, "message/user", {})
    seen = observed(live)
    results: list[bool] = []

    async def flush() -> None:
        results.append(await live.flush(session))

    async with anyio.create_task_group() as group:
        group.start_soon(flush)
        with anyio.fail_after(WAIT):
            await entered.wait()
        live.append(session, "message/user", {})
        live.append(session, "message/user", {})
        proceed.set()
    assert results == [True]
    assert flushed(seen) == [SessionFlushed(session, 2)]
    assert len(session) == 4


async def test_a_raising_listener_fails_the_flush_only_after_the_others_settle(
    live: LiveSessions, session: Session
) -> None:
    log: list[str] = []
    slow_entered = anyio.Event()
    release_slow = anyio.Event()

    class Failing(Listener):
        async def flush(self, session: Session) -> bool | None:
            log.append("failing raised")
            raise Boom("disk on fire")

    class Slow(Listener):
        async def flush(self, session: Session) -> bool | None:
            slow_entered.set()
            await release_slow.wait()
            log.append("slow settled")
            return True

    live.add_listener(session, Slow())
    live.add_listener(session, Failing())
    live.append(session, "message/user", {})
    seen = observed(live)
    errors: list[FlushError] = []

    async def flush() -> None:
        try:
            await live.flush(session)
        except FlushError as error:
            log.append("flush raised")
            errors.append(error)

    async with anyio.create_task_group() as group:
        group.start_soon(flush)
        with anyio.fail_after(WAIT):
            await slow_entered.wait()
        for _ in range(10):
            await anyio.lowlevel.checkpoint()
        assert log == ["failing raised"]  # the flush is still waiting for the slow one
        release_slow.set()
    assert log == ["failing raised", "slow settled", "flush raised"]
    assert [type(error) for error in errors[0].errors] == [Boom]
    assert errors[0].session is session
    assert "s1" in str(errors[0]) and "disk on fire" in str(errors[0])
    assert flushed(seen) == []


async def test_every_listener_failure_is_reported(live: LiveSessions, session: Session) -> None:
    class Failing(Listener):
        def __init__(self, message: str) -> None:
            super().__init__()
            self.message = message

        async def flush(self, session: Session) -> bool | None:
            raise Boom(self.message)

    live.add_listener(session, Failing("one"))
    live.add_listener(session, Listener(True))
    live.add_listener(session, Failing("two"))
    with pytest.raises(FlushError, match="2 listener") as info:
        await live.flush(session)
    assert sorted(str(error) for error in info.value.errors) == ["one", "two"]


async def test_a_lone_raising_listener_fails_the_flush(
    live: LiveSessions, session: Session
) -> None:
    class Failing(Listener):
        async def flush(self, session: Session) -> bool | None:
            raise Boom("alone")

    live.add_listener(session, Failing())
    seen = observed(live)
    with pytest.raises(FlushError, match="alone") as info:
        await live.flush(session)
    assert [str(error) for error in info.value.errors] == ["alone"]
    assert flushed(seen) == []
