"""Serving a `FrameQueue` on an accepted WebSocket, and closing it with the queue's code.

`serve` runs, in one task group, a sender that writes the queued frames and
a receiver that reads (and drops) what the client sends until it
disconnects — the streams are one-way, but reading drains the client's
buffers and notices a disconnect at once — plus any `also` task; whichever
of the first two ends first cancels the rest. `close` then says why the
server ended it (the queue's `end_code`, 1000 without one), unless the
client already left. `refuse` answers a handshake that cannot be accepted
with the HTTP status and error body of its reason, before any frame.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from fastapi import WebSocket
from starlette.websockets import WebSocketDisconnect, WebSocketState

from .errors import api_error_for, deny_websocket
from .frames import NORMAL, FrameQueue

__all__ = ["close", "refuse", "serve"]

log = logging.getLogger(__name__)


async def refuse(websocket: WebSocket, error: Exception, what: str) -> None:
    """Refuse the handshake for `error` with its HTTP status and error body (500 and the
    server log for an error that is not a refusal); `what` names what was opened."""
    refusal = api_error_for(error)
    if refusal is None:
        log.error("cannot open %s", what, exc_info=error)
        status, code, message = 500, "internal_error", "see the server log"
    else:
        status, code, message = refusal.status, refusal.code, refusal.message
    await deny_websocket(websocket.send, websocket.scope, status, code, message)


async def serve(
    websocket: WebSocket,
    queue: FrameQueue,
    cancel: anyio.CancelScope,
    *also: Callable[[], Coroutine[Any, Any, None]],
) -> None:
    """Accept `websocket` and pump `queue` into it until either side ends (`cancel` too)."""
    with cancel:
        await websocket.accept()
        async with anyio.create_task_group() as group:
            group.start_soon(_send_frames, websocket, queue, group.cancel_scope)
            group.start_soon(_receive_until_gone, websocket, group.cancel_scope)
            for task in also:
                group.start_soon(task)


async def close(websocket: WebSocket, queue: FrameQueue) -> None:
    """Say why the server ends the stream, unless the client already left."""
    if websocket.client_state is not WebSocketState.CONNECTED:
        return
    if websocket.application_state is not WebSocketState.CONNECTED:
        return
    with contextlib.suppress(WebSocketDisconnect, RuntimeError):
        await websocket.close(queue.end_code or NORMAL)


async def _send_frames(websocket: WebSocket, queue: FrameQueue, done: anyio.CancelScope) -> None:
    try:
        async for frame in queue.frames:
            await websocket.send_text(frame)
    except WebSocketDisconnect:
        pass  # the client vanished mid-send; the receiver notices too
    finally:
        done.cancel()


async def _receive_until_gone(websocket: WebSocket, done: anyio.CancelScope) -> None:
    try:
        while (await websocket.receive())["type"] != "websocket.disconnect":
            pass
    finally:
        done.cancel()
