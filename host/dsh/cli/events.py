"""One-line, human-readable summaries of stored events, for `dsh sessions show`.

A summary is for reading, not parsing: long texts are clipped, and data that
does not have the shape its type promises falls back to compact JSON rather
than failing (a stored log is shown as it is). The host's own events are read
through their payload models (`dsh.events`), strictly: what they refuse is
shown as compact JSON. A plugin's events are always compact JSON: the host
does not know their payloads (and `dsh sessions show` loads no plugin), so
what a plugin stores is shown exactly as stored.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pydantic import JsonValue

from ..session.errors import PayloadError
from ..session.event import SessionEvent
from ..session.events import (
    HOST_EVENT_TYPES,
    AssistantMessage,
    ErrorInfo,
    SessionTitle,
    ToolResult,
    TurnEnd,
    UserMessage,
)
from ..session.events import decode as decode_host_event

__all__ = ["CLIP", "compact", "summarize", "utc"]

CLIP = 120


def utc(epoch_ms: int) -> str:
    """`epoch_ms` as UTC ISO-8601 with milliseconds and `Z`; the raw number if out of range."""
    try:
        moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return str(epoch_ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def compact(value: JsonValue, limit: int = CLIP) -> str:
    """`value` as compact JSON (non-ASCII kept), clipped to `limit` characters."""
    return _clip(json.dumps(value, ensure_ascii=False, separators=(",", ":")), limit)


def summarize(event: SessionEvent) -> str:
    """A one-line summary of `event.data`, by event type."""
    summary = _host_event(event) if event.type in HOST_EVENT_TYPES else None
    return compact(event.data) if summary is None else summary


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _host_event(event: SessionEvent) -> str | None:
    """A host event through its payload model (`dsh.events`); None if it is malformed."""
    try:
        payload = decode_host_event(event)
    except PayloadError:
        return None
    if isinstance(payload, UserMessage):
        return f"{payload.source.kind}: {compact(payload.text)}"
    if isinstance(payload, AssistantMessage):
        parts = [compact(payload.text)] if payload.text or not payload.tool_calls else []
        parts += [
            f"-> {call.name}({compact(call.arguments, CLIP // 2)})" for call in payload.tool_calls
        ]
        return " ".join(parts)
    if isinstance(payload, ToolResult):
        if payload.error is not None:
            return f"{payload.name} failed: {_error(payload.error)}"
        return f"{payload.name} = {compact(payload.value)}"
    if isinstance(payload, TurnEnd):
        return payload.status if payload.error is None else f"error: {_error(payload.error)}"
    if isinstance(payload, SessionTitle):
        return f"title: {compact(payload.title)}"
    return "(end of the seed: a new live lifecycle starts here)"


def _error(error: ErrorInfo) -> str:
    return f"{error.code}: {_clip(error.message, CLIP)}"
