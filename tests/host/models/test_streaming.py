from __future__ import annotations

import pytest

from dsh.models import ModelReply, StreamSink, reasoning_channel
from dsh.models.streaming import fragments, stream_reply, stream_text

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("text", "pieces", "expected"),
    [
        ("", 3, []),
        ("ab", 3, ["a", "b"]),
        ("abcdefg", 3, ["abc", "def", "g"]),
        ("⏰ 提醒：喝水", 2, ["⏰ 提醒", "：喝水"]),
        ("whole", 1, ["whole"]),
    ],
)
def test_fragments_are_at_most_n_parts_that_concatenate_to_the_text(
    text: str, pieces: int, expected: list[str]
) -> None:
    assert fragments(text, pieces) == expected
    assert "".join(fragments(text, pieces)) == text


def test_fragments_needs_at_least_one_piece() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        fragments("x", 0)


async def test_stream_text_reports_each_fragment_in_order() -> None:
    seen: list[str] = []

    await stream_text("hello world", seen.append)

    assert seen == ["hell", "o wo", "rld"]


async def test_stream_text_without_a_sink_does_nothing() -> None:
    await stream_text("hello", None)  # must not raise


async def test_stream_reply_sends_reasoning_to_its_channel_first_then_the_text() -> None:
    events: list[tuple[str, str]] = []
    sink = StreamSink(
        lambda text: events.append(("answer", text)),
        lambda text: events.append(("reasoning", text)),
    )

    await stream_reply(ModelReply(text="ok", reasoning="why"), sink, pieces=2)

    assert events == [("reasoning", "wh"), ("reasoning", "y"), ("answer", "o"), ("answer", "k")]


async def test_stream_reply_to_a_plain_sink_sends_only_the_text() -> None:
    seen: list[str] = []

    await stream_reply(ModelReply(text="ok", reasoning="hidden"), seen.append, pieces=1)
    await stream_reply(ModelReply(text="no thoughts"), seen.append, pieces=1)

    assert seen == ["ok", "no thoughts"]
    assert reasoning_channel(seen.append) is None
