"""One-line, human-readable summaries of stored events, for `dsh sessions show`.

A summary is for reading, not parsing: long texts are clipped, and data that
does not have the shape its type promises falls back to compact JSON rather
than failing (a stored log is shown as it is).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import MappingProxyType

from pydantic import JsonValue

from ..session import END_SEED, SessionEvent

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
    summarizer = _SUMMARIZERS.get(event.type)
    summary = summarizer(event.data) if summarizer is not None else None
    return compact(event.data) if summary is None else summary


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _user(data: JsonValue) -> str | None:
    if not isinstance(data, dict) or not isinstance(text := data.get("text"), str):
        return None
    source = data.get("source")
    kind = source.get("kind") if isinstance(source, dict) else None
    return f"{kind if isinstance(kind, str) else '?'}: {compact(text)}"


def _assistant(data: JsonValue) -> str | None:
    if not isinstance(data, dict) or not isinstance(text := data.get("text"), str):
        return None
    calls = data.get("toolCalls", [])
    if not isinstance(calls, list):
        return None
    parts = [compact(text)] if text or not calls else []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(name := call.get("name"), str):
            return None
        parts.append(f"-> {name}({compact(call.get('arguments', {}), CLIP // 2)})")
    return " ".join(parts)


def _tool_result(data: JsonValue) -> str | None:
    if not isinstance(data, dict) or not isinstance(name := data.get("name"), str):
        return None
    error = data.get("error")
    if isinstance(error, dict):
        return f"{name} failed: {_error(error)}"
    if "value" in data:
        return f"{name} = {compact(data['value'])}"
    return None


def _turn_end(data: JsonValue) -> str | None:
    if not isinstance(data, dict) or not isinstance(status := data.get("status"), str):
        return None
    error = data.get("error")
    return f"{status}: {_error(error)}" if isinstance(error, dict) else status


def _end_seed(data: JsonValue) -> str | None:
    return "(end of the seed: a new live lifecycle starts here)" if data == {} else None


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


def _error(error: dict[str, JsonValue]) -> str:
    code, message = error.get("code"), error.get("message")
    if isinstance(code, str) and isinstance(message, str):
        return f"{code}: {_clip(message, CLIP)}"
    return compact(error)


_SUMMARIZERS: Mapping[str, Summarizer] = MappingProxyType(
    {
        "message/user": _user,
        "message/assistant": _assistant,
        "tool/result": _tool_result,
        "turn/end": _turn_end,
        END_SEED: _end_seed,
        "schedule/change": _schedule_change,
    }
)
