"""One-line, human-readable summaries of stored events, for `dsh sessions show`.

A summary is for reading, not parsing: long texts are clipped, and data that
does not have the shape its type promises falls back to compact JSON rather
than failing (a stored log is shown as it is). The host's own events are read
through their payload models (`dsh.events`), strictly: what they refuse is
shown as compact JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import MappingProxyType

from pydantic import JsonValue

from ..events import (
    HOST_EVENT_TYPES,
    AssistantMessage,
    ErrorInfo,
    PayloadError,
    SessionTitle,
    ToolResult,
    TurnEnd,
    UserMessage,
)
from ..events import decode as decode_host_event
from ..session import SessionEvent

__all__ = ["CLIP", "compact", "summarize", "utc"]

CLIP = 120

Summarizer = Callable[[JsonValue], str | None]


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
    if event.type in HOST_EVENT_TYPES:
        summary = _host_event(event)
    else:
        summarizer = _SUMMARIZERS.get(event.type)
        summary = summarizer(event.data) if summarizer is not None else None
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


def _schedule_change(data: JsonValue) -> str | None:
    if not isinstance(data, dict) or not isinstance(change := data.get("change"), str):
        return None
    if change in ("delete", "dispatch") and isinstance(data.get("id"), str):
        return f"{change} {data['id']}"
    record = data.get("record")
    if change == "create" and isinstance(record, dict):
        prompt = record.get("prompt")
        return (
            f"create {_plain(record.get('id'))} after {_plain(record.get('afterSeconds'))}s "
            f"(due {_plain(record.get('scheduledAt'))}): "
            + (compact(prompt) if isinstance(prompt, str) else "?")
        )
    return None


def _plain(value: JsonValue) -> str:
    return str(value) if isinstance(value, str | int | float) else "?"


def _error(error: ErrorInfo) -> str:
    return f"{error.code}: {_clip(error.message, CLIP)}"


# Plugin event types the host knows how to summarize (it never imports a plugin).
_SUMMARIZERS: Mapping[str, Summarizer] = MappingProxyType({"schedule/change": _schedule_change})
