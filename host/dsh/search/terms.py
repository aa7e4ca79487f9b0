"""Search terms: how message text and a person's query become the terms an index compares.

One function for both sides, so a word is found exactly as it was stored:

1. Text is NFKC-normalised and case-folded (`ＡＢＣ`, `abc` and `ABC` are one word).
2. **Words** are runs of letters and digits outside the scripts below; each
   is a term (`stretch`, `5pm`).
3. **CJK** (Han, kana, Hangul) has no spaces between words, so a run of it
   becomes its overlapping character pairs and then its last character:
   `我们开会` → `我们 们开 开会 会`. A two-character word (`开会`, the most
   common length) is then one term, any longer one a phrase of consecutive
   pairs, and every character starts some term (for a one-character query).
4. **A query** is a conjunction: every word must occur, and a CJK run must
   occur as consecutive pairs (a phrase). The last word of a query is a
   prefix (`stre` finds `stretch`: the list narrows while a person types).
   A single CJK character is a prefix of a pair (`会` finds `会议`).

`fts_query(query)` spells that in SQLite FTS5's query language (every term
quoted: the text of a query can never be read as an operator), and
`snippet(text, query)` cuts the part of a message a result shows.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = [
    "SNIPPET_CHARS",
    "Query",
    "fts_query",
    "index_terms",
    "parse_query",
    "snippet",
    "ts_query",
    "ts_vector",
]

SNIPPET_CHARS = 80

_CJK = (
    r"\u3040-\u30ff"  # hiragana, katakana
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # Han
    r"\uac00-\ud7af"  # Hangul syllables
    r"\U00020000-\U0002fa1f"  # Han, supplementary planes
)
_RUN = re.compile(rf"([{_CJK}]+)|([^\W{_CJK}_]+)")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _pairs(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]


def index_terms(text: str) -> str:
    """The terms of `text`, space-separated (what the index stores)."""
    terms: list[str] = []
    for cjk, word in _RUN.findall(_fold(text)):
        if not cjk:
            terms.append(word)
        elif len(cjk) == 1:
            terms.append(cjk)
        else:
            terms.extend([*_pairs(cjk), cjk[-1]])
    return " ".join(terms)


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: `groups` are phrases (each a tuple of terms) that must all occur;
    `prefix` says the last group's last term is a prefix. `needles` are the folded
    pieces a snippet looks for."""

    groups: tuple[tuple[str, ...], ...]
    prefix: bool
    needles: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.groups


def parse_query(text: str) -> Query:
    """The query a person typed (see the module docstring, rule 4)."""
    groups: list[tuple[str, ...]] = []
    needles: list[str] = []
    prefix = False
    for cjk, word in _RUN.findall(_fold(text)):
        if cjk:
            groups.append(tuple(_pairs(cjk)))
            needles.append(cjk)
            prefix = len(cjk) == 1
        else:
            groups.append((word,))
            needles.append(word)
            prefix = True
    return Query(tuple(groups), prefix, tuple(needles))


def fts_query(query: Query) -> str:
    """`query` in SQLite FTS5 syntax: `"a b" "c"*` (terms never contain a quote)."""
    parts = []
    for index, group in enumerate(query.groups):
        phrase = '"' + " ".join(group) + '"'
        last = index == len(query.groups) - 1
        parts.append(phrase + "*" if last and query.prefix else phrase)
    return " ".join(parts)


def ts_vector(terms: str) -> str:
    """Space-separated `terms` as a PostgreSQL `tsvector` literal with positions
    (`'我们':1 '们开':2`): cast, not parsed, so no locale decides what a letter is."""
    return " ".join(f"'{term}':{min(at, 16383)}" for at, term in enumerate(terms.split(), 1))


def ts_query(query: Query) -> str:
    """`query` as a PostgreSQL `tsquery` literal: phrases joined by `<->`, groups by
    `&`, the last term `:*` when it is a prefix (terms never contain a quote)."""
    parts = []
    for index, group in enumerate(query.groups):
        last = index == len(query.groups) - 1
        lexemes = [f"'{term}'" for term in group]
        if last and query.prefix:
            lexemes[-1] += ":*"
        parts.append("(" + " <-> ".join(lexemes) + ")")
    return " & ".join(parts)


def snippet(text: str, query: Query, width: int = SNIPPET_CHARS) -> str:
    """About `width` characters of `text` around the first place a needle of `query`
    occurs (the start when none does), on one line, with `…` where it was cut."""
    line = " ".join(text.split())
    folded = _fold(line)
    # NFKC can change lengths (ﬁ → fi); positions in the folded text are then
    # approximate, which only moves the window a little.
    found = [at for needle in query.needles if (at := folded.find(needle)) >= 0]
    start = max(0, min(found) - width // 4) if found else 0
    if start and len(line) - start < width:
        start = max(0, len(line) - width)
    cut = line[start : start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(line) else "")
