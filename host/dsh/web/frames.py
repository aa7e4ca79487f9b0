"""`FrameQueue`: one WebSocket's bounded queue of pre-encoded frames, and the close codes.

Producers `put` frames without waiting (they run inside appends, flushes and
the attention worker, which nobody may block); a queue whose consumer fell
`capacity` frames behind ends with 1013 ("try again later") and calls
`on_overflow`, so that its connection is cancelled and its client
reconnects and catches up. `end(code)` stops queueing: the consumer drains
what is queued, then closes the socket with `code`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..base.scope import Disposer

__all__ = [
    "GOING_AWAY",
    "NORMAL",
    "RESYNC",
    "SESSION_DELETED",
    "TRY_AGAIN_LATER",
    "FrameQueue",
    "encode_frame",
]

NORMAL = 1000
GOING_AWAY = 1001
RESYNC = 1012
TRY_AGAIN_LATER = 1013
SESSION_DELETED = 4404


def encode_frame(frame: dict[str, Any]) -> str:
    """One frame as compact JSON text (non-ASCII kept)."""
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def _nothing() -> None:
    return None


class FrameQueue:
    """A bounded queue of frames for one WebSocket (see the module docstring).

    `end_code` is None while it runs; once ended it holds the close code the
    connection should send. `release` is called once when it is closed (what
    the queue held on to, such as a watch).
    """

    def __init__(self, capacity: int, on_overflow: Callable[[], None]) -> None:
        self.end_code: int | None = None
        self.release: Disposer = _nothing
        self._on_overflow = on_overflow
        self._send: MemoryObjectSendStream[str]
        self._receive: MemoryObjectReceiveStream[str]
        self._send, self._receive = anyio.create_memory_object_stream[str](capacity)

    @property
    def ended(self) -> bool:
        return self.end_code is not None

    def put(self, frame: str) -> None:
        """Queue `frame` without waiting; a full buffer ends the queue (1013)."""
        if self.end_code is not None:
            return
        try:
            self._send.send_nowait(frame)
        except anyio.WouldBlock:
            self.end(TRY_AGAIN_LATER)
            self._on_overflow()

    def end(self, code: int) -> None:
        """Stop queueing; the consumer drains what is queued, then stops."""
        if self.end_code is None:
            self.end_code = code
            self._send.close()

    def close(self) -> None:
        """Release both ends of the queue (the consumer is done with it) and its hold."""
        self._send.close()
        self._receive.close()
        release, self.release = self.release, _nothing
        release()

    @property
    def frames(self) -> MemoryObjectReceiveStream[str]:
        """The queued frames, in order; iteration stops once the queue ended."""
        return self._receive
