"""Text from outside shown on a terminal as text, never obeyed as terminal commands.

A stored title, a reminder's prompt, a tool's result, a model's error or a
file name may hold characters a terminal obeys rather than shows: ESC
sequences that set the window title (`ESC ] 0 ; … BEL`), erase and move
lines (`ESC [ 2K ESC [ 1A`) or write the clipboard (OSC 52), their 8-bit C1
forms (U+009B is CSI), carriage returns that overwrite a line, and Unicode
bidi controls that reorder what follows (U+202E). Every line a `dsh`
command writes for a person goes through `visible` (`dsh.Streams`); machine
output (`--json`) is written exactly instead.

Rules:

1. Escaped: C0 (U+0000–U+001F), DEL (U+007F), C1 (U+0080–U+009F), the bidi
   controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the line
   and paragraph separators (U+2028, U+2029) and lone surrogates
   (U+D800–U+DFFF, which no terminal encoding can write).
2. Each becomes `\\n`, `\\r` or `\\t`, else `\\uXXXX` (lower-case hex): JSON's
   spellings, so a JSON line that passes through stays valid JSON with the
   same value.
3. Everything else is kept, backslashes included: the result is for
   reading, not for parsing back (`--json` is for that). Escaping is
   idempotent.
"""

from __future__ import annotations

import logging
import re

__all__ = ["VisibleFormatter", "visible", "visible_lines"]

_CONTROL = "\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
_ANY = re.compile(f"[{_CONTROL}]")
# The same, with the line feed left alone: text of several lines stays several lines.
_BUT_NEWLINES = re.compile(f"(?![\n])[{_CONTROL}]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def visible(text: str) -> str:
    """`text` on one line with every control character escaped (the module's rules).

    For a field a person reads inside a line or a table cell: a line feed
    becomes `\\n`, so the field cannot start a line of its own.
    """
    return _ANY.sub(_escape, text)


def visible_lines(text: str) -> str:
    """`text` with every control character but the line feed escaped.

    For whole messages that may span lines on purpose (help, a warning with
    a traceback): each line is shown as text; a field inside one that must
    not add lines is passed through `visible` first.
    """
    return _BUT_NEWLINES.sub(_escape, text)


class VisibleFormatter(logging.Formatter):
    """A `logging.Formatter` whose lines show control characters as escapes (`visible_lines`):
    for log lines written to a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        return visible_lines(super().format(record))
