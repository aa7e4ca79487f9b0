"""Server-sent events framing for chat-completions streams."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from dsh.models.openai.sse import ServerEvent, server_events

pytestmark = pytest.mark.anyio


async def events_of(*lines: str) -> list[ServerEvent]:
    async def source() -> AsyncIterator[str]:
        for line in lines:
            yield line

    return [event async for event in server_events(source())]


async def test_each_blank_line_ends_one_event() -> None:
    events = await events_of("data: {}", "", "data:[DONE]", "")

    assert events == [ServerEvent("{}"), ServerEvent("[DONE]")]


async def test_several_data_lines_join_with_newlines_and_one_leading_space_is_dropped() -> None:
    assert await events_of("data: a", "data:  b", "") == [ServerEvent("a\n b")]


async def test_comments_ids_retries_and_empty_events_carry_nothing() -> None:
    events = await events_of(": keep-alive", "", "id: 4", "retry: 10", "", "", "data: x", "")

    assert events == [ServerEvent("x")]


async def test_an_event_name_applies_to_its_event_only() -> None:
    events = await events_of("event: error", "data: boom", "", "data: next", "")

    assert events == [ServerEvent("boom", "error"), ServerEvent("next")]


async def test_a_llama_cpp_error_line_is_an_error_event() -> None:
    assert await events_of('error: {"message": "x"}', "") == [
        ServerEvent('{"message": "x"}', "error")
    ]


async def test_data_pending_when_the_stream_ends_is_delivered() -> None:
    assert await events_of("data: last") == [ServerEvent("last")]
