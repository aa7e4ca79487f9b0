from __future__ import annotations

import pytest

from dsh.models.streaming import fragments, stream_text

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
