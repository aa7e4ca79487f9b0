"""`WS /api/sessions/{id}/live`: one WebSocket connection to the live stream.

The guard has already checked the Host, the token and the Origin. Then:

1. an invalid id is refused with 404 `invalid_session_id`, an unknown one
   with 404 `session_not_found`, a storage failure with 503 — all before
   the handshake is accepted;
2. the tail is the live Session's length, or for a cold Session the stored
   count (`Catalogue.tail`: counted, never decoded). A cold Session is **not**
   resumed by watching it: the connection is accepted, says hello with the
   stored tail, and starts streaming when the Session becomes live (a client
   resumes it explicitly or by posting a message), so watching never starts
   an agent;
3. the subscription is made synchronously with the hello frame (see
   `live.LiveHub.subscribe`), then `sockets.serve` pumps it (and follows the
   Session on another host of a shared store, `LiveHub.follow`);
4. the close code says why the server ended it: 1013 when the client fell
   more than `queue_frames` frames behind, 1012 when the Session's history
   restarted under it, 1001 when the server is going away, 4404 when the
   Session was deleted.
"""

from __future__ import annotations

import logging
from functools import partial

import anyio
from fastapi import APIRouter, WebSocket

from . import sockets
from .live import LiveHub, Subscription
from .state import WebState, web_state

__all__ = ["router"]

log = logging.getLogger(__name__)

router = APIRouter()


@router.websocket("/api/sessions/{session_id}/live")
async def live(websocket: WebSocket, session_id: str) -> None:
    state = web_state(websocket.app)
    tail = await _tail_or_deny(websocket, state, session_id)
    if tail is None:
        return
    cancel = anyio.CancelScope()
    subscription = state.hub.subscribe(session_id, tail, cancel.cancel)
    try:
        follow = partial(_follow, state.hub, subscription)
        await sockets.serve(websocket, subscription, cancel, follow)
    finally:
        state.hub.unsubscribe(subscription)
    with anyio.move_on_after(state.settings.close_timeout, shield=True):
        await sockets.close(websocket, subscription)


async def _tail_or_deny(websocket: WebSocket, state: WebState, session_id: str) -> int | None:
    """The tail to say hello with, or None after refusing the handshake."""
    try:
        return await state.host.catalogue.tail(session_id)
    except Exception as error:
        await sockets.refuse(websocket, error, f"the live stream of {session_id}")
        return None


async def _follow(hub: LiveHub, subscription: Subscription) -> None:
    try:
        await hub.follow(subscription)
    except Exception as error:  # storage failing: the stream goes on with local events
        log.warning("cannot follow session %s from storage: %s", subscription.session_id, error)
