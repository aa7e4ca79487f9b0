from __future__ import annotations

import io
import json
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh.base.visible import VisibleFormatter, visible, visible_lines

from ...support.terminal import BIDI, obeyed

ESCAPED = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))] + [*BIDI, "\u2028", "\u2029"]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b]0;pwned\x07", "\\u001b]0;pwned\\u0007"),
        ("\x1b[2K\x1b[1A", "\\u001b[2K\\u001b[1A"),
        ("\x1b]52;c;cm0gLXJmIH4=\x07", "\\u001b]52;c;cm0gLXJmIH4=\\u0007"),
        ("\x9b31m red", "\\u009b31m red"),
        ("abc\u202efed", "abc\\u202efed"),
        ("one\ntwo\rthree\tfour", "one\\ntwo\\rthree\\tfour"),
        ("\x00\x7f\ud800", "\\u0000\\u007f\\ud800"),
        ("café 中文 🙂 C:\\x1b", "café 中文 🙂 C:\\x1b"),
    ],
)
def test_visible_shows_each_control_as_an_escape_and_keeps_the_rest(text: str, shown: str) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize("char", ESCAPED, ids=lambda char: f"U+{ord(char):04X}")
def test_every_listed_character_is_escaped(char: str) -> None:
    assert obeyed(visible(char)) == []
    assert visible(char) != char


def test_visible_lines_keeps_line_feeds_and_escapes_the_rest() -> None:
    assert visible_lines("a\x1b[2K\nb\r\n") == "a\\u001b[2K\nb\\r\n"


@given(st.text())
def test_nothing_a_terminal_obeys_survives_and_escaping_twice_changes_nothing(text: str) -> None:
    once = visible(text)
    assert obeyed(once) == [] and "\n" not in once
    assert visible(once) == once
    assert obeyed(visible_lines(text)) == []
    assert visible_lines(text).split("\n") == [visible(part) for part in text.split("\n")]


@given(st.recursive(st.text() | st.integers(), lambda inner: st.lists(inner, max_size=3)))
def test_a_json_line_stays_json_with_the_same_value(value: object) -> None:
    line = json.dumps(value, ensure_ascii=False)
    assert json.loads(visible(line)) == value


def test_the_formatter_escapes_the_formatted_line() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(VisibleFormatter("%(levelname)s %(message)s"))
    logger = logging.getLogger("tests.visible")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("skipped %s", "sessions/\x1b]0;x\x07.jsonl")
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    assert out.getvalue() == "WARNING skipped sessions/\\u001b]0;x\\u0007.jsonl\n"
