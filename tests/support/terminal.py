"""What a terminal would obey in a command's output: for tests of hostile text."""

from __future__ import annotations

import unicodedata

__all__ = ["BIDI", "HOSTILE", "obeyed"]

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Sets the window title, erases and climbs a line, writes the clipboard (OSC 52),
# an 8-bit CSI, reverses what follows, returns the carriage, and a NUL.
HOSTILE = "\x1b]0;pwned\x07\x1b[2K\x1b[1A\x1b]52;c;cm0gLXJmIH4=\x07\x9b31m\u202edesrever\rover\x00"


def obeyed(text: str) -> list[str]:
    """The characters of `text` a terminal would act on rather than show (line feeds aside)."""
    return [
        char
        for char in text
        if char != "\n" and (unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") or char in BIDI)
    ]
