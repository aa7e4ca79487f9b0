"""Live events, sidecars and flushes in the web host against a reference of what a client sees.

The real `LiveHub` (host/dsh/web/live.py) observes a real `LiveSessions` whose
only listener is a gate the test controls: each flush acknowledges (True),
only observes (None, so the barrier returns False) or raises, and pairs of
flushes can be held open and completed in either order (concurrent flushes
finishing in reverse). Hypothesis draws sequences of appends (some of an
event type that has a view), flushes, held flush pairs, new subscriptions at
any tail and unsubscriptions.

The reference states DESIGN §9 directly: a subscription gets `hello(tail)`,
then every event from its tail once, raw, on append; the view of an event is
sent once per subscription, as a sidecar, exactly when the first successful
flush covering it completes (or on subscribing, if it is already covered),
never before and never for a failed flush. After every step each
subscription's queue must equal the reference, frame for frame.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, cast

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh.persistence.errors import StorageError
from dsh.session.errors import FlushError
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions
from dsh.session.log import Session
from dsh.testing import FakeClock
from dsh.web.live import LiveHub, Subscription
from tests.support.deadlines import WAIT
from tests.support.frames import drain

from .figures import Figures

pytestmark = [pytest.mark.reliability]

EXAMPLES = 500
VIEWED = "test/viewed"
PLAIN = "test/plain"
Op = tuple[Any, ...]


class NoLifecycle:
    """No Session here goes live or cold through a Host: nothing to observe or hold."""

    def observe(self, observer: object) -> Callable[[], None]:
        return lambda: None

    def hold(self, session_id: str) -> Callable[[], None]:
        return lambda: None


class Views:
    """What the plugins say here: a receipt for each viewed event, and no state."""

    def view(self, session: Session, event: SessionEvent) -> dict[str, Any] | None:
        return {"receipt": event.seq} if event.type == VIEWED else None

    def states(self, log: object) -> dict[str, Any]:
        return {}  # no plugin keeps a state here: no state frames


class ViewHost:
    """What `LiveHub` reads from a Host: the live Sessions, event views, and (no) agents."""

    def __init__(self) -> None:
        self.live = LiveSessions(FakeClock())
        self.lifecycle = NoLifecycle()
        self.contributions = Views()

    def agent(self, session_id: str) -> None:
        return None


class Gate:
    """The only store listener: each flush answers the next scripted outcome, maybe held."""

    def __init__(self) -> None:
        self.script: list[tuple[str, anyio.Event | None]] = []
        self.entered = 0

    def on_append(self, session: Session, event: SessionEvent) -> None:
        return None

    async def flush(self, session: Session) -> bool | None:
        outcome, hold = self.script.pop(0)
        self.entered += 1
        if hold is not None:
            await hold.wait()
        if outcome == "raise":
            raise StorageError("injected: the disk refused")
        return True if outcome == "ack" else None


class Reference:
    """What each subscription must have been sent so far (decoded frames)."""

    def __init__(self) -> None:
        self.viewed: list[bool] = []
        self.watermark = 0
        self.expected: dict[int, list[dict[str, Any]]] = {}

    def raw(self, seq: int) -> dict[str, Any]:
        event = {"seq": seq, "type": VIEWED if self.viewed[seq] else PLAIN, "time": 0, "data": {}}
        return {"kind": "event", "event": event}

    def sidecar(self, seq: int) -> dict[str, Any]:
        view = {"for": "event", "view": {"receipt": seq}}
        return {**self.raw(seq), "sidecar": view}

    def subscribe(self, key: int, tail: int) -> None:
        frames: list[dict[str, Any]] = [{"kind": "hello", "tail": tail}]
        for seq in range(tail, len(self.viewed)):
            frames.append(self.raw(seq))
            if seq < self.watermark and self.viewed[seq]:
                frames.append(self.sidecar(seq))
        self.expected[key] = frames

    def append(self, viewed: bool) -> None:
        self.viewed.append(viewed)
        for frames in self.expected.values():
            frames.append(self.raw(len(self.viewed) - 1))

    def flushed(self, through: int) -> None:
        for seq in range(self.watermark, through):
            if self.viewed[seq]:
                for frames in self.expected.values():
                    frames.append(self.sidecar(seq))
        self.watermark = max(self.watermark, through)


OUTCOMES = st.sampled_from(["ack", "ack", "observe", "raise"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.booleans()),
        st.tuples(st.just("flush"), OUTCOMES),
        st.tuples(st.just("pair"), OUTCOMES, OUTCOMES, st.integers(0, 3), st.booleans()),
        st.tuples(st.just("subscribe"), st.floats(0, 1)),
        st.tuples(st.just("unsubscribe"), st.integers(0, 5)),
    ),
    max_size=30,
)


class LiveScenario:
    """One drawn sequence of operations against a fresh hub, store and gate."""

    def __init__(self, ops: list[Op], counters: Counter[str]) -> None:
        self.ops = ops
        self.counters = counters
        self.host = ViewHost()
        self.hub = LiveHub(cast(Any, self.host), queue_frames=10_000)
        self.session = Session.new("live", cwd="/", created_at=0)
        self.gate = Gate()
        self.reference = Reference()
        self.subscriptions: dict[int, Subscription] = {}
        self.received: dict[int, list[dict[str, Any]]] = {}
        self.keys = iter(range(1_000))

    async def run(self) -> None:
        self.hub.start()
        self.host.live.open(self.session)
        self.host.live.add_listener(self.session, self.gate)
        try:
            for op in self.ops:
                await self.step(op)
                self.check()
            self.counters["sidecars_expected"] += sum(
                1
                for frames in self.reference.expected.values()
                for frame in frames
                if "sidecar" in frame
            )
        finally:
            for subscription in self.subscriptions.values():
                self.hub.unsubscribe(subscription)
            self.hub.close()

    def append(self, viewed: bool) -> None:
        self.host.live.append(self.session, VIEWED if viewed else PLAIN, {})
        self.reference.append(viewed)
        self.counters["appends"] += 1

    def check(self) -> None:
        for key, subscription in self.subscriptions.items():
            self.received[key].extend(drain(subscription))
            normalised = [_without_time(frame) for frame in self.received[key]]
            assert normalised == self.reference.expected[key], (key, self.ops)

    async def flush(self, outcome: str, done: anyio.Event | None = None) -> None:
        through = len(self.session)
        try:
            durable = await self.host.live.flush(self.session)
        except FlushError:
            durable = False
        if durable:
            self.reference.flushed(through)
        self.counters[f"flush_{outcome}"] += 1
        if done is not None:
            done.set()

    async def step(self, op: Op) -> None:
        if op[0] == "append":
            self.append(op[1])
        elif op[0] == "flush":
            self.gate.script.append((op[1], None))
            await self.flush(op[1])
        elif op[0] == "pair":
            await self.pair(*op[1:])
        elif op[0] == "subscribe":
            key = next(self.keys)
            tail = round(op[1] * len(self.session))
            self.subscriptions[key] = self.hub.subscribe(self.session.id, tail, lambda: None)
            self.received[key] = []
            self.reference.subscribe(key, tail)
            self.counters["subscriptions"] += 1
        elif op[0] == "unsubscribe" and self.subscriptions:
            key = sorted(self.subscriptions)[op[1] % len(self.subscriptions)]
            self.hub.unsubscribe(self.subscriptions.pop(key))
            del self.reference.expected[key]

    async def pair(self, first: str, second: str, appended: int, reverse: bool) -> None:
        """Two concurrent barriers, appends between them, completed in order or reversed."""
        holds = (anyio.Event(), anyio.Event())
        finished = (anyio.Event(), anyio.Event())
        base = self.gate.entered
        async with anyio.create_task_group() as group:
            self.gate.script.append((first, holds[0]))
            group.start_soon(self.flush, first, finished[0])
            await _until(lambda: self.gate.entered == base + 1)
            for _ in range(appended):
                self.append(True)
            self.check()
            self.gate.script.append((second, holds[1]))
            group.start_soon(self.flush, second, finished[1])
            await _until(lambda: self.gate.entered == base + 2)
            self.check()  # nothing may be sent while both barriers are open
            for index in (1, 0) if reverse else (0, 1):
                holds[index].set()
                await finished[index].wait()
                self.check()
        self.counters["reversed_pairs" if reverse else "ordered_pairs"] += 1


def _without_time(frame: dict[str, Any]) -> dict[str, Any]:
    if "event" in frame:
        frame = {**frame, "event": {**frame["event"], "time": 0}}
    return frame


async def _until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.lowlevel.checkpoint()


def test_every_durable_view_reaches_each_client_once_after_its_flush_and_never_before(
    scale: int, figures: Figures
) -> None:
    counters: Counter[str] = Counter()

    @settings(
        max_examples=EXAMPLES * scale,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(ops=OPS)
    def check(ops: list[Op]) -> None:
        anyio.run(LiveScenario(ops, counters).run)
        counters["examples"] += 1

    check()
    figures.merge("live_properties", counters)
    assert counters["sidecars_expected"] > 0 and counters["reversed_pairs"] > 0
