"""What a lane reads back from a running `dsh web`: events, reminder frames, live frames.

Everything here observes the host from outside (HTTP, the WebSocket, the
JSONL files); waiting is always for a condition with a deadline.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.support.webhost import WebHost, wait_for

__all__ = [
    "LiveFrames",
    "ReminderFrame",
    "changes",
    "iso_ms",
    "now_ms",
    "own_events",
    "wait_history",
]

Event = dict[str, Any]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def iso_ms(text: str) -> int:
    """Epoch milliseconds of a protocol timestamp (`2026-01-01T00:00:10.000Z`)."""
    parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000 + 0.5)


def changes(events: list[Event], change: str, *, start: int = 0) -> list[Event]:
    """The `schedule/change` events of kind `change` with seq ≥ `start`."""
    return [
        event
        for event in events
        if event["seq"] >= start
        and event["type"] == "schedule/change"
        and event["data"]["change"] == change
    ]


def own_events(stored: list[dict[str, Any]]) -> list[Event]:
    """The events of a stored log (header first) that its own Session wrote: from `seedLength`."""
    header, events = stored[0], stored[1:]
    start = header.get("seedLength", 0)
    return [event for event in events if event["seq"] >= start]


def wait_history(
    web: WebHost, session_id: str, ready: Callable[[dict[str, Any]], bool], what: str, **wait: Any
) -> dict[str, Any]:
    """Poll `GET /events` (the whole log) until `ready(page)`; return that page."""

    def probe() -> dict[str, Any] | None:
        page = web.all_events(session_id)
        return page if ready(page) else None

    return wait_for(probe, what=what, **wait)


class ReminderFrame:
    """The fixed reminder message a dispatch queues (dsh-tool-schedule's frame), parsed."""

    def __init__(self, text: str) -> None:
        lines = text.split("\n")
        assert len(lines) == 11, text
        assert lines[0] == "[Scheduled reminder]", text
        fields = dict(line.split(": ", 1) for line in lines[2:10])
        self.id: str = json.loads(fields["Reminder id"])
        self.prompt: str = json.loads(fields["Prompt"])
        self.rule: str = json.loads(fields["Rule"])
        # `Occurrence: <local time with offset> (<zone>) = <UTC>`
        self.occurrence_local, self.occurrence_at = fields["Occurrence"].split(" = ")
        self.due_at = self.occurrence_at
        self.delivered_ms = iso_ms(fields["Delivered at"])
        self.status: str = fields["Status"]
        self.missed = int(fields["Missed"].split(" ", 1)[0])
        self.next: str = fields["Next"]
        assert lines[10].startswith("Delivery: it fires "), text

    def assert_status_matches_timing(self) -> None:
        """`on time` when delivered less than a second late, else `overdue by …`."""
        late = self.delivered_ms - iso_ms(self.due_at)
        assert late >= 0, f"delivered {late} ms before its target"
        if late < 1000:
            assert self.status == "on time", (late, self.status)
        else:
            assert self.status.startswith("overdue by "), (late, self.status)


class LiveFrames:
    """Every frame one WebSocket received from `/api/sessions/{id}/live`, parsed."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self.frames: list[dict[str, Any]] = []

    @classmethod
    @contextmanager
    def open(cls, web: WebHost, session_id: str) -> Iterator[LiveFrames]:
        url = f"{web.ws_base}/api/sessions/{session_id}/live?token={web.token}"
        # No Origin header: a non-browser client is allowed; a browser's must match.
        with connect(url, open_timeout=10) as socket:
            yield cls(socket)

    def until(
        self, ready: Callable[[list[dict[str, Any]]], bool], what: str, timeout: float = 20.0
    ) -> list[dict[str, Any]]:
        """Receive frames until `ready(frames)`; TimeoutError after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not ready(self.frames):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
            try:
                text = self._socket.recv(timeout=remaining)
            except TimeoutError:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}") from None
            self.frames.append(json.loads(text))
        return self.frames
