from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from dsh import SessionLog, hookimpl
from dsh.host.host import Host
from dsh.session.errors import FlushError
from dsh.session.log import Session
from dsh.web.live import GOING_AWAY, RESYNC, TRY_AGAIN_LATER, LiveHub, Subscription
from tests.support.frames import drain

from .conftest import MARKED, PLAIN, Gate, MarkerPlugin, StreamingModel, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture
def opened() -> Iterator[list[Subscription]]:
    subscriptions: list[Subscription] = []
    yield subscriptions
    for subscription in subscriptions:
        subscription.close()


@pytest.fixture
def hub(host: Host, opened: list[Subscription]) -> Iterator[LiveHub]:
    live = Tracked(host, opened, queue_frames=64)
    live.start()
    yield live
    live.close()


class Tracked(LiveHub):
    """A hub whose subscriptions the test fixture closes at teardown."""

    def __init__(self, host: Host, opened: list[Subscription], queue_frames: int) -> None:
        super().__init__(host, queue_frames=queue_frames)
        self._opened = opened

    def subscribe(self, session_id: str, tail: int, on_overflow: Any) -> Subscription:
        subscription = super().subscribe(session_id, tail, on_overflow)
        self._opened.append(subscription)
        return subscription


class Overflows:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def sidecars(frames: list[dict[str, Any]]) -> list[int]:
    return [frame["event"]["seq"] for frame in frames if "sidecar" in frame]


def raw_seqs(frames: list[dict[str, Any]]) -> list[int]:
    return [
        frame["event"]["seq"]
        for frame in frames
        if frame["kind"] == "event" and "sidecar" not in frame
    ]


async def test_hello_with_the_live_tail_comes_first(host: Host, hub: LiveHub) -> None:
    session = (await host.create_session()).session
    host.live.append(session, PLAIN, {})
    subscription = hub.subscribe(session.id, len(session), Overflows())
    host.live.append(session, PLAIN, {"n": 2})
    frames = drain(subscription)
    assert frames[0] == {"kind": "hello", "tail": 1}
    assert frames[1] == {
        "kind": "event",
        "event": {"seq": 1, "type": PLAIN, "time": session.events[1].time, "data": {"n": 2}},
    }


async def test_an_append_is_sent_raw_and_never_with_its_view(host: Host, hub: LiveHub) -> None:
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, 0, Overflows())
    host.live.append(session, MARKED, {"x": 1})
    frames = drain(subscription)
    assert raw_seqs(frames) == [0]
    assert sidecars(frames) == []


async def test_a_view_is_redelivered_exactly_once_after_the_flush_that_covers_it(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, 0, Overflows())
    host.live.append(session, MARKED, {"x": 1})
    host.live.append(session, PLAIN, {})
    drain(subscription)
    assert await host.live.flush(session) is True
    frames = drain(subscription)
    assert frames == [
        {
            "kind": "event",
            "event": session.events[0].to_dict(),
            "sidecar": {"for": "event", "view": {"marked": {"x": 1}, "seq": 0}},
        }
    ]
    assert await host.live.flush(session) is True
    assert drain(subscription) == []
    assert hub.watermark(session) == 2


async def test_a_failed_flush_redelivers_nothing_and_a_later_success_does(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    gate = Gate()
    host.live.add_listener(session, gate)
    subscription = hub.subscribe(session.id, 0, Overflows())
    host.live.append(session, MARKED, {})
    drain(subscription)
    gate.outcomes = [OSError("disk on fire")]
    with pytest.raises(FlushError):
        await host.live.flush(session)
    assert drain(subscription) == []
    assert hub.watermark(session) == 0
    gate.outcomes = [True]
    assert await host.live.flush(session) is True
    assert sidecars(drain(subscription)) == [0]


async def test_flushes_completing_in_reverse_order_keep_the_highest_watermark(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    gate = Gate()
    host.live.add_listener(session, gate)
    subscription = hub.subscribe(session.id, 0, Overflows())
    first, second = anyio.Event(), anyio.Event()
    gate.holds = [first, second]
    done: list[str] = []

    async def flush(name: str) -> None:
        assert await host.live.flush(session) is True
        done.append(name)

    async with anyio.create_task_group() as group:
        host.live.append(session, MARKED, {"n": 0})
        group.start_soon(flush, "short")
        await wait_until(lambda: gate.entered == 1)
        host.live.append(session, MARKED, {"n": 1})
        group.start_soon(flush, "long")
        await wait_until(lambda: gate.entered == 2)
        drain(subscription)
        second.set()
        await wait_until(lambda: done == ["long"])
        assert sidecars(drain(subscription)) == [0, 1]
        assert hub.watermark(session) == 2
        first.set()
    assert done == ["long", "short"]
    assert drain(subscription) == []
    assert hub.watermark(session) == 2


async def test_a_reopened_session_is_a_new_object_that_starts_from_nothing(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {})
    await host.live.flush(session)
    assert hub.watermark(session) == 1
    subscription = hub.subscribe(session.id, len(session), Overflows())
    await host.close_session(session.id)
    reopened, resumed = await host.resume(session.id)
    assert resumed and reopened.session is not session
    frames = drain(subscription)
    # Cold, then the new lifecycle's end-seed and live again. The watermark of the new
    # object starts from nothing; the subscriber, which had everything below its tail
    # from history, is not sent the views below it again.
    assert frames[1] == {"kind": "live", "live": False}
    assert raw_seqs(frames) == [1]
    assert frames[2]["event"]["type"] == "session/end-seed"
    assert frames[-1] == {"kind": "live", "live": True}
    assert sidecars(frames) == []
    assert hub.watermark(reopened.session) == 2
    assert subscription.session is reopened.session


async def test_a_flush_with_no_subscriber_advances_the_watermark_without_asking_for_views(
    host: Host, hub: LiveHub, marker: MarkerPlugin
) -> None:
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {})
    asked = marker.asked
    await host.live.flush(session)
    assert hub.watermark(session) == 1
    assert marker.asked == asked


async def test_watching_a_cold_session_streams_once_it_becomes_live(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {})
    await host.close_session(session.id)
    subscription = hub.subscribe(session.id, 1, Overflows())
    assert subscription.session is None
    assert drain(subscription) == [{"kind": "hello", "tail": 1}]
    agent, _ = await host.resume(session.id)
    host.live.append(agent.session, PLAIN, {})
    host.live.append(agent.session, MARKED, {"new": True})
    await host.live.flush(agent.session)
    frames = drain(subscription)
    assert raw_seqs(frames) == [1, 2, 3]
    # The stored receipt (seq 0) came with the cold history the client read;
    # only receipts that become durable while it watches are sent.
    assert sidecars(frames) == [3]


async def test_resuming_a_session_with_many_receipts_does_not_flood_its_watchers(
    host: Host, opened: list[Subscription]
) -> None:
    session = (await host.create_session()).session
    for _ in range(10):
        host.live.append(session, MARKED, {})
    await host.close_session(session.id)
    small = Tracked(host, opened, queue_frames=4)
    small.start()
    try:
        subscription = small.subscribe(session.id, 10, Overflows())
        drain(subscription)

        await host.resume(session.id)

        assert not subscription.ended
        assert raw_seqs(drain(subscription)) == [10]
    finally:
        small.close()


async def test_binding_below_the_watermark_sends_the_durable_views_it_catches_up(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {})
    host.live.append(session, PLAIN, {})
    await host.live.flush(session)
    host.live.append(session, MARKED, {"late": True})
    subscription = hub.subscribe(session.id, 0, Overflows())
    frames = drain(subscription)
    assert [frame["kind"] for frame in frames] == ["hello", "event", "event", "event", "event"]
    assert raw_seqs(frames) == [0, 1, 2]
    assert sidecars(frames) == [0]


async def test_a_client_ahead_of_the_live_history_is_told_to_resync(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, 5, Overflows())
    assert subscription.end_code == RESYNC
    assert drain(subscription) == [{"kind": "hello", "tail": 5}]
    assert hub.subscribers(session.id) == 0


async def test_a_full_queue_ends_the_subscription_without_blocking_appends(
    host: Host, opened: list[Subscription]
) -> None:
    hub = Tracked(host, opened, queue_frames=3)
    hub.start()
    overflows = Overflows()
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, 0, overflows)
    for n in range(10):
        host.live.append(session, PLAIN, {"n": n})
    assert len(session) == 10
    assert subscription.end_code == TRY_AGAIN_LATER
    assert overflows.count == 1
    assert len(drain(subscription)) == 3
    hub.close()


async def test_streamed_text_is_forwarded_as_delta_frames_in_order(
    host: Host, hub: LiveHub
) -> None:
    agent = await host.create_session()
    subscription = hub.subscribe(agent.session.id, 0, Overflows())
    agent.submit("hi")
    await wait_until(lambda: len(agent.session) == 3)
    frames = drain(subscription)
    kinds = [
        (frame["kind"], frame.get("text") or frame.get("event", {}).get("type")) for frame in frames
    ]
    assert kinds == [
        ("hello", None),
        ("event", "message/user"),
        ("delta", "Hel"),
        ("delta", "lo"),
        ("event", "message/assistant"),
        ("event", "turn/end"),
    ]
    assert [frame["channel"] for frame in frames if frame["kind"] == "delta"] == [
        "answer",
        "answer",
    ]


async def test_reasoning_is_forwarded_on_its_own_channel_before_the_answer(
    host: Host, hub: LiveHub, model: StreamingModel
) -> None:
    model.thoughts = ["Weigh ", "it."]
    agent = await host.create_session()
    subscription = hub.subscribe(agent.session.id, 0, Overflows())
    agent.submit("hi")
    await wait_until(lambda: len(agent.session) == 3)
    deltas = [frame for frame in drain(subscription) if frame["kind"] == "delta"]
    assert deltas == [
        {"kind": "delta", "channel": "reasoning", "text": "Weigh "},
        {"kind": "delta", "channel": "reasoning", "text": "it."},
        {"kind": "delta", "channel": "answer", "text": "Hel"},
        {"kind": "delta", "channel": "answer", "text": "lo"},
    ]
    assert agent.session.events[1].data == {
        "text": "Hello",
        "toolCalls": [],
        "reasoning": "Weigh it.",
    }


async def test_deltas_reach_a_subscription_that_bound_before_the_agent_was_published(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    await host.close_session(session.id)
    subscription = hub.subscribe(session.id, 0, Overflows())
    agent, _ = await host.resume(session.id)
    agent.submit("hi")
    await wait_until(lambda: len(agent.session) == 4)
    texts = [frame["text"] for frame in drain(subscription) if frame["kind"] == "delta"]
    assert texts == ["Hel", "lo"]


async def test_closing_the_hub_ends_every_subscription_and_stops_observing(
    host: Host, opened: list[Subscription]
) -> None:
    hub = Tracked(host, opened, queue_frames=8)
    hub.start()
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, 0, Overflows())
    hub.close()
    hub.close()
    assert subscription.end_code == GOING_AWAY
    host.live.append(session, PLAIN, {})
    assert drain(subscription) == [{"kind": "hello", "tail": 0}]
    late = hub.subscribe(session.id, 0, Overflows())
    assert late.ended and drain(late) == []
    hub.start()
    assert hub.subscribers(session.id) == 0


async def test_unsubscribing_twice_is_harmless_and_counts_subscribers(
    host: Host, hub: LiveHub
) -> None:
    session = (await host.create_session()).session
    one = hub.subscribe(session.id, 0, Overflows())
    two = hub.subscribe(session.id, 0, Overflows())
    assert hub.subscribers(session.id) == 2
    hub.unsubscribe(one)
    hub.unsubscribe(one)
    assert hub.subscribers(session.id) == 1
    hub.unsubscribe(two)
    assert hub.subscribers(session.id) == 0


async def test_a_view_that_is_not_json_is_not_sent(host: Host, hub: LiveHub) -> None:
    class Unencodable:
        @staticmethod
        def dsh_event_view(session: Any, event: Any) -> dict[str, Any]:
            return {"value": {1, 2}}

    from dsh.plugins.hookspecs import hookimpl

    hookimpl(Unencodable.dsh_event_view)
    host.pm.register(Unencodable(), name="test-unencodable")
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, 0, Overflows())
    host.live.append(session, PLAIN, {})
    await host.live.flush(session)
    assert sidecars(drain(subscription)) == []


async def test_only_subscribers_of_the_exact_object_get_its_deltas(
    host: Host, hub: LiveHub
) -> None:
    agent = await host.create_session()
    subscription = hub.subscribe(agent.session.id, 0, Overflows())
    other = hub.subscribe("elsewhere", 0, Overflows())
    hub._delta(agent.session, "x")  # the listener path, driven directly
    subscription.session = None
    hub._delta(agent.session, "y")
    assert [f["text"] for f in drain(subscription) if f["kind"] == "delta"] == ["x"]
    assert [f["kind"] for f in drain(other)] == ["hello"]


async def test_an_append_to_a_session_live_without_a_flush_binds_a_waiting_subscription(
    host: Host, hub: LiveHub
) -> None:
    subscription = hub.subscribe("direct", 0, Overflows())
    session = Session.new("direct", cwd="/", created_at=0)
    close = host.live.open(session)
    host.live.append(session, PLAIN, {})
    host.live.append(session, PLAIN, {})
    assert subscription.session is session
    assert raw_seqs(drain(subscription)) == [0, 1]
    close()


async def test_deltas_are_dropped_once_the_hub_closed_or_nobody_listens(
    host: Host, opened: list[Subscription]
) -> None:
    hub = Tracked(host, opened, queue_frames=8)
    hub.start()
    agent = await host.create_session()
    subscription = hub.subscribe(agent.session.id, 0, Overflows())
    hub._delta(agent.session, "heard")
    hub.unsubscribe(subscription)
    hub._delta(agent.session, "nobody")
    hub.close()
    hub._delta(agent.session, "closed")
    assert hub.subscribers(agent.session.id) == 0


# -- plugin state frames ----------------------------------------------------------


class MarkedCount:
    """Its state is how many `test/marked` events the durable log holds (None for none)."""

    def __init__(self) -> None:
        self.value: Any = None

    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> Any:
        count = sum(1 for _ in session.scan(types={MARKED}))
        if self.value is not None:
            return self.value
        return {"marked": count} if count else None


def states(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [frame for frame in frames if frame["kind"] == "state"]


async def test_a_state_frame_follows_only_the_flush_that_changed_the_state(
    host: Host, hub: LiveHub
) -> None:
    host.pm.register(MarkedCount(), name="counter")
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, len(session), Overflows())

    host.live.append(session, MARKED, {})
    appended = drain(subscription)
    assert await host.live.flush(session) is True
    flushed = drain(subscription)
    host.live.append(session, PLAIN, {})
    assert await host.live.flush(session) is True
    unchanged = drain(subscription)

    assert states(appended) == []
    assert states(flushed) == [{"kind": "state", "plugin": "counter", "state": {"marked": 1}}]
    assert states(unchanged) == []


async def test_a_failed_flush_sends_no_state_and_the_next_success_does(
    host: Host, hub: LiveHub
) -> None:
    host.pm.register(MarkedCount(), name="counter")
    session = (await host.create_session()).session
    gate = Gate()
    host.live.add_listener(session, gate)
    subscription = hub.subscribe(session.id, len(session), Overflows())
    host.live.append(session, MARKED, {})
    gate.outcomes = [OSError("disk on fire")]

    with pytest.raises(FlushError):
        await host.live.flush(session)
    after_failure = drain(subscription)
    assert await host.live.flush(session) is True

    assert states(after_failure) == []
    assert states(drain(subscription)) == [
        {"kind": "state", "plugin": "counter", "state": {"marked": 1}}
    ]


async def test_a_new_subscription_starts_with_the_durable_states(host: Host, hub: LiveHub) -> None:
    host.pm.register(MarkedCount(), name="counter")
    session = (await host.create_session()).session
    host.live.append(session, MARKED, {})
    assert await host.live.flush(session) is True
    host.live.append(session, MARKED, {})  # not durable yet

    subscription = hub.subscribe(session.id, 0, Overflows())

    assert states(drain(subscription)) == [
        {"kind": "state", "plugin": "counter", "state": {"marked": 1}}
    ]


async def test_a_state_that_goes_away_is_sent_as_null_and_json_kinds_are_told_apart(
    host: Host, hub: LiveHub
) -> None:
    counter = MarkedCount()
    host.pm.register(counter, name="counter")
    session = (await host.create_session()).session
    subscription = hub.subscribe(session.id, len(session), Overflows())
    counter.value = {"flag": 1}
    host.live.append(session, PLAIN, {})
    await host.live.flush(session)
    counter.value = {"flag": True}  # equal in Python, not in JSON
    host.live.append(session, PLAIN, {})
    await host.live.flush(session)
    counter.value = None
    host.live.append(session, PLAIN, {})
    await host.live.flush(session)

    assert [frame["state"] for frame in states(drain(subscription))] == [
        {"flag": 1},
        {"flag": True},
        None,
    ]


async def test_watching_a_cold_session_gets_its_states_once_it_is_live_and_stored(
    host: Host, hub: LiveHub
) -> None:
    host.pm.register(MarkedCount(), name="counter")
    agent = await host.create_session()
    host.live.append(agent.session, MARKED, {})
    await host.close_session(agent.session.id)
    subscription = hub.subscribe(agent.session.id, 2, Overflows())
    assert states(drain(subscription)) == []

    await host.resume(agent.session.id)

    assert states(drain(subscription)) == [
        {"kind": "state", "plugin": "counter", "state": {"marked": 1}}
    ]
