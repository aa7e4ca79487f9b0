"""Server-sent events framing, as chat-completions servers use it.

Lines arrive without their line endings. An event is the `data:` lines up to a
blank line, joined with newlines; comment lines (`: keep-alive`) and the `id`
and `retry` fields are ignored; `event:` names the event. llama.cpp reports a
failure with a non-standard `error:` line, which becomes an event named
`error`. Data still pending when the stream ends is delivered as a last event.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ["ServerEvent", "server_events"]


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """One event: its name (`message` unless the server named it) and its data."""

    data: str
    name: str = "message"


async def server_events(lines: AsyncIterable[str]) -> AsyncIterator[ServerEvent]:
    """The events in `lines`, in order."""
    data: list[str] = []
    name = "message"
    async for line in lines:
        if not line:
            if data:
                yield ServerEvent("\n".join(data), name)
            data, name = [], "message"
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
        elif field == "error":
            yield ServerEvent(value, "error")
    if data:
        yield ServerEvent("\n".join(data), name)
