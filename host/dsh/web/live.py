"""The live stream: observations of the live Sessions fanned out to WebSocket subscriptions.

`LiveHub` observes one Host's `LiveSessions` and turns observations into
frames (pre-encoded JSON text, encoded once per observation):

- `{"kind":"hello","tail":N}` first, when a subscription starts;
- `{"kind":"event","event":{...}}` for every appended event, raw, on append;
- `{"kind":"event","event":{...},"sidecar":{"for":"event","view":{...}}}`
  when a durable event that has a view is redelivered (below);
- `{"kind":"delta","channel":"answer"|"reasoning","text":...}` for streamed
  assistant text and, on its own channel, the model's reasoning (ephemeral:
  never stored, never replayed; the stored `message/assistant` supersedes
  both). Clients treat a delta frame without `channel` as `"answer"`;
- `{"kind":"state","plugin":...,"state":...}` when a plugin's state of the
  Session (`dsh_session_state`) changed (below);
- `{"kind":"live","live":true|false}` when the Session came back (resumed,
  woken by the wake index, or made live by a message) or went cold
  (hibernated, closed), from the Host's `SessionLifecycle` (below).

**Commit-aware sidecars** (DESIGN §9). A view is never attached on append:
the append observation precedes the durability result, so it would show a
receipt whose flush may still fail. The hub keeps one watermark per exact
live Session *object* in a `WeakKeyDictionary`; a `session/flushed`
observation that advances it (the max wins, since concurrent flushes can
complete in reverse order) redelivers the newly covered events that have a
view to that object's subscribers. A Session reopened under the same id is a
new object and starts from nothing. With no subscriber at flush time the
watermark just advances: nobody could receive the sidecars, and a client that
connects later gets views from history instead.

**Plugin states** follow the same commit point. Each subscription keeps the
states it was last sent. When it is bound to a Session with a durable prefix
it gets every plugin's state of that prefix; after each flush that advances
the watermark, the states of the new durable prefix are computed once and
each subscription is sent a `state` frame for every plugin whose state
differs from what it last got (`null` when a plugin no longer has one). A
state is never computed from events that are not durable, so a frame never
announces a change a failed flush could take back.

**Subscriptions** are per Session *id*. A subscription is bound to the live
object it streams; at subscription time that is the current live object, if
any. A subscription to a cold Session waits, and is bound to the next live
object with that id as soon as the live Sessions report anything about it (a
resume's first flush, an append); the same happens when a live Session is
closed and reopened. Binding first catches the client up from the tail it
was last told about (raw events, plus sidecars for those already below the
watermark), so the stream never has a hole. If the new object is shorter
than what the client already saw, the two histories cannot be joined and the
subscription ends with 1012 so that the client reconnects and resyncs.

**Across lifecycles.** A subscription outlives the Session object it is
bound to. When that object goes cold, its subscribers get `live: false`
(after the close's last flush, so every sidecar of that lifecycle was sent)
and are unbound; sidecars below what they were already sent are not sent
again. When the Session comes back — a person resumed it, or the wake index
woke it for a reminder — they are bound to the new object at its first
observation (the resume's flush), caught up from their tail (the resume's
`session/end-seed` marker first), and get `live: true` once its agent is
published: a tab watching a cold Session sees a woken reminder arrive
without doing anything. Each subscription also holds its Session against
hibernation (`SessionLifecycle.hold`) while it lasts: a watched Session is
never closed under its watcher.

**On another host** (a store several hosts share). A subscription to a
Session that is live on another host is fed from storage (`follow`, one
task per connection): a notification that events were stored — or a poll —
reads the stored events after what was sent, each with its view, and the
plugins' states of the stored log, so such a stream carries only durable
events. `{"kind":"live"}` frames then say whether some host holds the
Session. Deltas (streamed text) are not carried across hosts.

**Nobody blocks an agent.** Observers run synchronously inside `append` and
`flush`; every put is `send_nowait` into a bounded per-subscription buffer.
A subscription whose buffer is full ends with 1013 ("try again later"), and
its connection is cancelled; the client reconnects and resyncs from history.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any

from pydantic import JsonValue

from ..agents.agent import DeltaChannel
from ..base.scope import Disposer
from ..host.catalogue import PageRequest
from ..host.host import Host
from ..session.event import SessionEvent
from ..session.live import Observation, SessionFlushed
from ..session.log import Session
from .frames import GOING_AWAY, RESYNC, SESSION_DELETED, TRY_AGAIN_LATER, FrameQueue, encode_frame

__all__ = [
    "GOING_AWAY",
    "RESYNC",
    "SESSION_DELETED",
    "TRY_AGAIN_LATER",
    "LiveHub",
    "Subscription",
    "encode_frame",
]

log = logging.getLogger(__name__)

FOLLOW_PAGE = 500  # stored events read at a time when following another host


def event_frame(event: SessionEvent) -> str:
    # The event's canonical JSON is spliced in as it is held: no decode, no re-encode.
    return '{"kind":"event","event":' + event.to_json() + "}"


def live_frame(live: bool) -> str:
    return encode_frame({"kind": "live", "live": live})


def state_frame(plugin: str, state: JsonValue) -> str:
    return encode_frame({"kind": "state", "plugin": plugin, "state": state})


def sidecar_frame(event: SessionEvent, view: dict[str, Any]) -> str:
    sidecar = encode_frame({"for": "event", "view": view})
    return '{"kind":"event","event":' + event.to_json() + ',"sidecar":' + sidecar + "}"


class Subscription(FrameQueue):
    """One WebSocket's bounded queue of frames for one Session id (`FrameQueue`).

    `on_overflow` is called (synchronously) when the buffer overflows, to
    cancel the connection promptly.
    """

    def __init__(
        self, session_id: str, next_seq: int, capacity: int, on_overflow: Callable[[], None]
    ) -> None:
        super().__init__(capacity, on_overflow)
        self.session_id = session_id
        self.next_seq = next_seq
        # Sidecars below this seq are not sent: they belong to events that were
        # already durable when the client subscribed to a cold Session, and the
        # detached history it reads carries their views.
        self.sidecar_floor = 0
        # The state frames last sent, by plugin (None: none yet, so all go out next).
        self.states: dict[str, str] | None = None
        self.session: Session | None = None


class LiveHub:
    """Fans the Host's observations of its live Sessions out to subscriptions (module docstring)."""

    def __init__(self, host: Host, *, queue_frames: int = 1024) -> None:
        self._host = host
        self._queue_frames = queue_frames
        self._watermarks: weakref.WeakKeyDictionary[Session, int] = weakref.WeakKeyDictionary()
        self._streaming_deltas: weakref.WeakSet[Session] = weakref.WeakSet()
        self._subscriptions: dict[str, list[Subscription]] = {}
        self._stop: Disposer | None = None
        self._stop_lifecycle: Disposer | None = None
        self._closed = False

    # -- lifecycle --------------------------------------------------------

    def start(self) -> None:
        """Begin observing the Host's live Sessions."""
        if self._stop is None and not self._closed:
            self._stop = self._host.live.observe(self._observe)
            self._stop_lifecycle = self._host.lifecycle.observe(self._lifecycle)

    def close(self) -> None:
        """Stop observing and end every subscription with 1001 (idempotent)."""
        self._closed = True
        if self._stop is not None:
            stop, self._stop = self._stop, None
            stop()
        if self._stop_lifecycle is not None:
            stop, self._stop_lifecycle = self._stop_lifecycle, None
            stop()
        for subscriptions in list(self._subscriptions.values()):
            for subscription in subscriptions:
                subscription.end(GOING_AWAY)
        self._subscriptions.clear()

    def watermark(self, session: Session) -> int:
        """How many leading events of this exact object a flush proved durable (0: none)."""
        return self._watermarks.get(session, 0)

    # -- subscriptions ----------------------------------------------------

    def subscribe(
        self, session_id: str, tail: int, on_overflow: Callable[[], None]
    ) -> Subscription:
        """Start streaming `session_id` to a new subscription, from `tail`.

        Synchronous on purpose: the hello frame with `tail` is queued first,
        and if the Session is live now the subscription is bound (and caught
        up from `tail`) before any other observation can run.
        """
        subscription = Subscription(session_id, tail, self._queue_frames, on_overflow)
        if self._closed:
            subscription.end(GOING_AWAY)
            return subscription
        self._subscriptions.setdefault(session_id, []).append(subscription)
        subscription.release = self._host.lifecycle.hold(session_id)
        subscription.put(encode_frame({"kind": "hello", "tail": tail}))
        live = self._host.live.find(session_id)
        if live is not None:
            self._bind(subscription, live)
        else:
            subscription.sidecar_floor = tail
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        """Forget `subscription` and release its queue (idempotent)."""
        subscription.close()
        self._forget(subscription)

    def _forget(self, subscription: Subscription) -> None:
        subscriptions = self._subscriptions.get(subscription.session_id)
        if subscriptions is not None and subscription in subscriptions:
            subscriptions.remove(subscription)
            if not subscriptions:
                del self._subscriptions[subscription.session_id]

    def end_session(self, session_id: str, code: int = SESSION_DELETED) -> None:
        """End every subscription to `session_id` with `code` (the Session was deleted)."""
        for subscription in self._subscriptions.pop(session_id, []):
            subscription.end(code)

    async def follow(self, subscription: Subscription) -> None:
        """Stream what other hosts store of the Session while it is not live here.

        Runs beside the connection's sender (the request's task group) with a
        store shared by several hosts (`Host.relays.followers`); returns at once
        otherwise. Each wake-up (a notification that events were stored, or
        the poll) reads the stored events after the subscription's `next_seq`
        as a history page — stored events only, each with its view, so the
        stream shows exactly what a local watcher's durable sidecars show —
        then the plugins' states of the stored log; `{"kind":"live"}` says
        whether some host holds the Session. Once it is live here, the local
        observations take over from `next_seq` (see `_bind`).
        """
        followers = self._host.relays.followers
        if followers is None:
            return
        session_id = subscription.session_id
        live_there: bool | None = None
        while not subscription.ended:
            if subscription.session is None and self._host.live.find(session_id) is None:
                owner = await self._host.catalogue.live_elsewhere(session_id)
                await self._catch_up_stored(subscription)
                live = owner is not None
                if subscription.session is None and live != live_there:
                    if live_there is not None or live:
                        subscription.put(live_frame(live))
                    live_there = live
            else:
                live_there = None  # this host's lifecycle frames say it now
            await followers.changed(session_id)

    async def _catch_up_stored(self, subscription: Subscription) -> None:
        session_id = subscription.session_id
        sent = False
        while not subscription.ended and subscription.session is None:
            start = subscription.next_seq
            page = await self._host.catalogue.page(
                session_id, PageRequest(from_seq=start, limit=FOLLOW_PAGE)
            )
            if subscription.session is not None or subscription.ended:
                return  # live here meanwhile: `_bind` caught it up
            if page.tail < start:
                subscription.end(RESYNC)  # the stored log is shorter than what it saw
                self._forget(subscription)
                return
            for event in page.events:
                if event.seq != subscription.next_seq:
                    continue
                subscription.put(event_frame(event))
                view = page.views.get(event.seq)
                if view is not None and event.seq >= subscription.sidecar_floor:
                    subscription.put(sidecar_frame(event, view))
                subscription.next_seq = event.seq + 1
                sent = True
            if subscription.next_seq >= page.tail or not page.events:
                break
        if sent:
            states = await self._host.plugin_states(session_id)
            if subscription.session is None and not subscription.ended:
                self._send_states([subscription], states)

    def subscribers(self, session_id: str) -> int:
        return len(self._subscriptions.get(session_id, ()))

    def _bind(self, subscription: Subscription, session: Session) -> None:
        if subscription.next_seq > len(session):
            subscription.end(RESYNC)
            self._forget(subscription)
            return
        subscription.session = session
        durable = self.watermark(session)
        events = session.events
        for seq in range(subscription.next_seq, len(events)):
            event = events[seq]
            subscription.put(event_frame(event))
            if subscription.sidecar_floor <= seq < durable:
                frame = self._view_frame(session, event)
                if frame is not None:
                    subscription.put(frame)
        subscription.next_seq = len(events)
        if durable:
            self._send_states([subscription], self._states(session, durable))
        self._stream_deltas(session)

    def _bind_all(self, subscriptions: list[Subscription], session: Session) -> None:
        """Bind every subscription of `session.id` that is not yet bound to `session`."""
        for subscription in list(subscriptions):
            if subscription.session is not session:
                self._bind(subscription, session)

    # -- observations -----------------------------------------------------

    def _lifecycle(self, session: Session, live: bool) -> None:
        subscriptions = self._subscriptions.get(session.id)
        if not subscriptions or self._closed:
            return
        frame = live_frame(live)
        if live:
            self._bind_all(subscriptions, session)
        for subscription in list(subscriptions):
            if subscription.session is not session:
                continue
            subscription.put(frame)
            if not live:
                # Everything of this lifecycle was sent: a rebind starts after it.
                subscription.session = None
                subscription.sidecar_floor = subscription.next_seq

    def _observe(self, observation: Observation) -> None:
        session = observation.session
        subscriptions = self._subscriptions.get(session.id)
        if isinstance(observation, SessionFlushed):
            self._flushed(session, observation.through, subscriptions)
        elif subscriptions:
            self._appended(session, observation.event, subscriptions)

    def _appended(
        self, session: Session, event: SessionEvent, subscriptions: list[Subscription]
    ) -> None:
        self._stream_deltas(session)
        frame: str | None = None
        for subscription in list(subscriptions):
            if subscription.session is not session:
                self._bind(subscription, session)  # catches up through `event` too
                continue
            # Bound subscriptions are always exactly at `event.seq` (each append
            # is observed), so the frame is encoded once for all of them.
            frame = frame or event_frame(event)
            subscription.put(frame)
            subscription.next_seq = event.seq + 1

    def _flushed(
        self, session: Session, through: int, subscriptions: list[Subscription] | None
    ) -> None:
        if subscriptions:
            # Bind first, against the old watermark: binding sends the sidecars
            # below it, and the loop below sends the ones this flush adds.
            self._bind_all(subscriptions, session)
        old = self.watermark(session)
        if through <= old:
            return
        self._watermarks[session] = through
        current = self._subscriptions.get(session.id)
        if not current:
            return
        # A resume's first flush covers the whole stored log: only the part
        # some subscriber still needs is presented.
        start = max(old, min(subscription.sidecar_floor for subscription in current))
        frames = [
            (event.seq, frame)
            for event in session.events[start:through]
            if (frame := self._view_frame(session, event)) is not None
        ]
        for subscription in list(current):  # all bound to `session` just above
            for seq, frame in frames:
                if seq >= subscription.sidecar_floor:
                    subscription.put(frame)
        self._send_states(current, self._states(session, through))

    def _states(self, session: Session, durable: int) -> dict[str, JsonValue]:
        """Every plugin's state of the first `durable` (stored) events of `session`."""
        return self._host.contributions.states(session.prefix(durable))

    def _send_states(self, subscriptions: list[Subscription], states: dict[str, JsonValue]) -> None:
        """Send each subscription the states that differ from what it last got."""
        # Compared as encoded JSON: in Python `True == 1`, in a client it is not.
        frames = {plugin: state_frame(plugin, state) for plugin, state in states.items()}
        for subscription in list(subscriptions):
            last = subscription.states
            for plugin in sorted(frames.keys() | (last or {}).keys()):
                frame = frames.get(plugin)
                if frame is None:
                    subscription.put(state_frame(plugin, None))  # its state is gone
                elif last is None or last.get(plugin) != frame:
                    subscription.put(frame)
            subscription.states = frames

    def _view_frame(self, session: Session, event: SessionEvent) -> str | None:
        # `Contributions.view` hands out only views it checked to be JSON objects.
        view = self._host.contributions.view(session, event)
        return None if view is None else sidecar_frame(event, view)

    # -- streamed text ----------------------------------------------------

    def _stream_deltas(self, session: Session) -> None:
        """Listen to the agent of `session` for streamed text, once per Session object."""
        if session in self._streaming_deltas:
            return
        agent = self._host.agent(session.id)
        if agent is None or agent.session is not session:
            return  # not published yet: the next observation of this object retries
        self._streaming_deltas.add(session)
        agent.add_delta_listener(lambda text: self._delta(session, text))
        agent.add_delta_listener(
            lambda text: self._delta(session, text, "reasoning"), channel="reasoning"
        )

    def _delta(self, session: Session, text: str, channel: DeltaChannel = "answer") -> None:
        if self._closed:
            return
        subscriptions = self._subscriptions.get(session.id)
        if not subscriptions:
            return
        frame = encode_frame({"kind": "delta", "channel": channel, "text": text})
        for subscription in list(subscriptions):
            if subscription.session is session:
                subscription.put(frame)
