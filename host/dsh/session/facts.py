"""What a Session list shows without decoding a log: its title and its preview.

Every backend summarises a Session the same way, so these rules live once:

- **title**: the `data.title` of the latest `session/title` event, when it is
  a non-empty string (anything else there means "no title").
- **preview**: the first line of the text of the first `message/user` whose
  `source.kind` is `"user"` (not a plugin's follow-up), stripped, at most
  `PREVIEW_LIMIT` characters; None until there is one.

Both are shown in lists, headers and terminals, beside other text: they hold
no bidirectional controls (`BIDI_CONTROLS`: the embeddings, overrides and
isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and
U+061C). One U+202E in a title would otherwise reverse what follows it on
screen — the rest of the title, and in a terminal the rest of the line
(issue 35). The events keep the text exactly; only these derived facts, and
a title a person sets (`without_bidi`), lose the controls.

`SummaryFacts` folds events one at a time, so a backend can keep it up to date
on every append (and rebuild it from the few events it needs: the latest
`session/title` and the leading `message/user` events).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import JsonValue

from .event import SessionEvent
from .types import SESSION_TITLE, USER_MESSAGE

__all__ = [
    "BIDI_CONTROLS",
    "PREVIEW_LIMIT",
    "SummaryFacts",
    "preview_of",
    "title_of",
    "without_bidi",
]

PREVIEW_LIMIT = 200
BIDI_CONTROLS = frozenset(
    "\u202a\u202b\u202c\u202d\u202e"  # embeddings and overrides
    "\u2066\u2067\u2068\u2069"  # isolates
    "\u200e\u200f\u061c"  # marks
)
_NO_BIDI = str.maketrans(dict.fromkeys(map(ord, BIDI_CONTROLS)))


def without_bidi(text: str) -> str:
    """`text` without its bidirectional controls (`BIDI_CONTROLS`)."""
    return text.translate(_NO_BIDI)


def title_of(data: JsonValue) -> str | None:
    """The title a `session/title` event's data sets (without bidi controls), or None."""
    title = data.get("title") if isinstance(data, dict) else None
    if not isinstance(title, str):
        return None
    return without_bidi(title).strip() or None


def preview_of(data: JsonValue) -> str | None:
    """The preview a `message/user` event's data gives, or None if it is not the person's."""
    if not isinstance(data, dict):
        return None
    source, text = data.get("source"), data.get("text")
    if not isinstance(source, dict) or source.get("kind") != "user" or not isinstance(text, str):
        return None
    lines = without_bidi(text).strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first[:PREVIEW_LIMIT] or None


@dataclass(slots=True)
class SummaryFacts:
    """The title and preview of a log, folded event by event (see the module docstring)."""

    title: str | None = None
    preview: str | None = None

    def add(self, event: SessionEvent) -> None:
        """Take one more event (in seq order) into account."""
        if event.type == SESSION_TITLE:
            self.title = title_of(event.data)
        elif event.type == USER_MESSAGE and self.preview is None:
            self.preview = preview_of(event.data)

    def add_all(self, events: Iterable[SessionEvent]) -> SummaryFacts:
        for event in events:
            self.add(event)
        return self
