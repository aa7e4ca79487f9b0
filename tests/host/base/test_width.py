from __future__ import annotations

import pytest

from dsh.base.width import display_width, pad


@pytest.mark.parametrize(
    ("text", "columns"),
    [
        ("", 0),
        ("abc", 3),
        ("中文", 4),  # East Asian Wide: two columns each
        ("ＡＢ", 4),  # Fullwidth forms
        ("ｶﾀ", 2),  # Halfwidth katakana: one column each
        ("e\u0301", 1),  # a combining acute accent adds nothing
        ("a\u200bb", 2),  # zero-width space
        ("한국어", 6),
        ("\\u001b[2J", 9),  # an escaped control is as wide as its escape
    ],
)
def test_display_width_counts_terminal_columns(text: str, columns: int) -> None:
    assert display_width(text) == columns


def test_pad_fills_to_a_display_width_and_never_cuts() -> None:
    assert pad("中", 4) == "中  "
    assert pad("ab", 4) == "ab  "
    assert pad("中文字", 4) == "中文字"
