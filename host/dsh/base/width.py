"""How many terminal columns text takes: for lining up columns of CJK and other wide text.

`len()` counts code points, but a terminal gives 中 two columns and a
combining accent none, so a table padded with `str.ljust` drifts as soon as
a cell holds Chinese. The rules follow the Unicode data Python ships
(`unicodedata`), as terminals do, without a dependency:

- East Asian Wide and Fullwidth characters (W, F) take two columns;
- combining marks (Mn, Me) and format characters (Cf: zero-width space and
  joiners) take none;
- everything else takes one (Ambiguous too: the width of a Western locale).

Widths are of text as it is printed: control characters are escaped first
(`dsh.visible`), so none reaches here in a table.
"""

from __future__ import annotations

import unicodedata

__all__ = ["display_width", "pad"]

_NONE = frozenset({"Mn", "Me", "Cf"})
_WIDE = frozenset({"W", "F"})


def _columns(char: str) -> int:
    if unicodedata.category(char) in _NONE:
        return 0
    return 2 if unicodedata.east_asian_width(char) in _WIDE else 1


def display_width(text: str) -> int:
    """The number of terminal columns `text` takes (the module's rules)."""
    return sum(_columns(char) for char in text)


def pad(text: str, width: int) -> str:
    """`text` followed by spaces up to `width` columns (`str.ljust` by display width);
    text already that wide or wider is returned as it is."""
    return text + " " * max(0, width - display_width(text))
