"""`WS /api/live`: every Session's alerts and unread counts, for one page.

The guard has already checked the Host, the token and the Origin, as for a
Session's stream. Then the connection watches the Host's attention
(`dsh.host.attention`): its first frame is `{"kind": "hello", "unread":
{<session id>: N, ...}}` (every Session with unread alerts), then one
`{"kind": "alert", ...}` per new alert of any Session and one `{"kind":
"unread", "sessionId", "count"}` per changed count.

A page that reconnects passes `?since=<epoch ms>` (the `at` of the last
alert it got): the alerts stored after it (at most 100) follow the hello,
so an alert that happened while it was away is not missed, and one it
already had is not sent again. Frames carry `sessionId` and `seq`, which
is what a page de-duplicates by. `since` that is not a count of
milliseconds is refused (422 `invalid_query`) before the handshake.

A connection ends with 1013 when its page fell `queue_frames` frames
behind (it reconnects and gets the counts afresh), and with 1001 when the
server stops.
"""

from __future__ import annotations

import anyio
from fastapi import APIRouter, WebSocket

from . import sockets
from .errors import ApiError
from .frames import FrameQueue, encode_frame
from .state import web_state

__all__ = ["router"]

router = APIRouter()


@router.websocket("/api/live")
async def live_everywhere(websocket: WebSocket) -> None:
    state = web_state(websocket.app)
    cancel = anyio.CancelScope()
    queue = FrameQueue(state.settings.queue_frames, cancel.cancel)
    try:
        since = _since(websocket.query_params.get("since"))
        queue.release = await state.host.attention.watch(
            lambda frame: queue.put(encode_frame(frame)), since
        )
    except Exception as error:
        queue.close()
        await sockets.refuse(websocket, error, "the live stream of every session")
        return
    state.pages.add(queue)
    try:
        await sockets.serve(websocket, queue, cancel)
    finally:
        state.pages.discard(queue)
        queue.close()
    with anyio.move_on_after(state.settings.close_timeout, shield=True):
        await sockets.close(websocket, queue)


def _since(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.isascii() or not value.isdigit() or len(value) > 16:
        raise ApiError(
            422, "invalid_query", f"'since' must be epoch milliseconds, not {value[:40]!r}"
        )
    return int(value)
