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
   `live.LiveHub.subscribe`), then two tasks run in one task group: a sender
   that writes queued frames, and a receiver that reads (and discards) what
   the client sends until it disconnects. Whichever ends first cancels the
   other;
4. the close code says why the server ended it: 1013 when the client fell
   more than `queue_frames` frames behind, 1012 when the Session's history
   restarted under it, 1001 when the server is going away, 4404 when the
   Session was deleted.
"""

from __future__ import annotations

import contextlib
import logging

import anyio
from fastapi import APIRouter, WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from .errors import api_error_for, deny_websocket
from .live import LiveHub, Subscription
from .state import WebState, web_state

__all__ = ["router"]

log = logging.getLogger(__name__)

NORMAL = 1000

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
        await _run(websocket, subscription, cancel, state.hub)
    finally:
        state.hub.unsubscribe(subscription)
    with anyio.move_on_after(state.settings.close_timeout, shield=True):
        await _close(websocket, subscription)


async def _tail_or_deny(websocket: WebSocket, state: WebState, session_id: str) -> int | None:
    """The tail to say hello with, or None after refusing the handshake."""
    try:
        return await state.host.catalogue.tail(session_id)
    except Exception as error:
        refusal = api_error_for(error)
        if refusal is None:
            log.exception("cannot open the live stream of %s", session_id)
            status, code, message = 500, "internal_error", "see the server log"
        else:
            status, code, message = refusal.status, refusal.code, refusal.message
        await deny_websocket(websocket.send, websocket.scope, status, code, message)
        return None


async def _follow(hub: LiveHub, subscription: Subscription) -> None:
    try:
        await hub.follow(subscription)
    except Exception as error:  # storage failing: the stream goes on with local events
        log.warning("cannot follow session %s from storage: %s", subscription.session_id, error)


async def _run(
    websocket: WebSocket, subscription: Subscription, cancel: anyio.CancelScope, hub: LiveHub
) -> None:
    with cancel:
        await websocket.accept()
        async with anyio.create_task_group() as group:
            group.start_soon(_send_frames, websocket, subscription, group.cancel_scope)
            group.start_soon(_receive_until_gone, websocket, group.cancel_scope)
            group.start_soon(_follow, hub, subscription)


async def _send_frames(
    websocket: WebSocket, subscription: Subscription, done: anyio.CancelScope
) -> None:
    try:
        async for frame in subscription.frames:
            await websocket.send_text(frame)
    except WebSocketDisconnect:
        pass  # the client vanished mid-send; the receiver notices too
    finally:
        done.cancel()


async def _receive_until_gone(websocket: WebSocket, done: anyio.CancelScope) -> None:
    # The stream is one-way: whatever a client sends is read and dropped, so
    # that its buffers drain and a disconnect is noticed at once.
    try:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass
    finally:
        done.cancel()


async def _close(websocket: WebSocket, subscription: Subscription) -> None:
    """Say why the server ends the stream, unless the client already left."""
    if websocket.client_state is not WebSocketState.CONNECTED:
        return
    if websocket.application_state is not WebSocketState.CONNECTED:
        return
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await websocket.close(subscription.end_code or NORMAL)
