"""A client of the live stream that records every frame it was sent, from a thread.

The crash rounds drive `dsh web` synchronously from the test thread; each
watched Session gets one `LiveWatch`: a thread holding a WebSocket open and
appending every decoded frame to `frames`, until the server closes it or the
process dies under it. What a watch recorded is what a browser would have been
shown, so the rounds check it against storage after the crash.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import InvalidStatus, WebSocketException
from websockets.sync.client import connect

from tests.support.webhost import wait_for

__all__ = ["LiveWatch"]


@dataclass
class LiveWatch:
    """One WebSocket on `/api/sessions/<id>/live` (see the module docstring)."""

    url: str
    session_id: str
    round: int
    frames: list[dict[str, Any]] = field(default_factory=list)
    refused: int | None = None
    _thread: threading.Thread | None = None

    @classmethod
    def open(cls, ws_base: str, token: str, session_id: str, round: int) -> LiveWatch:
        """Connect and wait for the hello frame (or a refusal, or the process dying)."""
        url = f"{ws_base}/api/sessions/{session_id}/live?token={token}"
        watch = cls(url, session_id, round)
        watch._thread = threading.Thread(target=watch._run, daemon=True, name=f"watch {session_id}")
        watch._thread.start()
        wait_for(lambda: bool(watch.frames) or not watch.alive, timeout=10, what="the hello frame")
        return watch

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        try:
            with connect(self.url, open_timeout=5, close_timeout=1, max_size=None) as ws:
                for message in ws:
                    self.frames.append(json.loads(message))
        except InvalidStatus as refusal:
            self.refused = refusal.response.status_code
        except (WebSocketException, OSError, TimeoutError):
            pass  # the server died or closed the stream: what was recorded stands

    def join(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
            assert not self._thread.is_alive(), f"the watch of {self.session_id} did not end"

    def events(self) -> Iterator[dict[str, Any]]:
        """Raw event frames (no sidecar), as the client first saw each event."""
        for frame in self.frames:
            if frame.get("kind") == "event" and "sidecar" not in frame:
                yield frame["event"]

    def sidecars(self) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """`(event, view)` of every sidecar frame."""
        for frame in self.frames:
            if frame.get("kind") == "event" and "sidecar" in frame:
                yield frame["event"], frame["sidecar"]["view"]
