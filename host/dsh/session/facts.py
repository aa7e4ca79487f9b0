"""What a Session list shows without decoding a log: its title and its preview.

Every backend summarises a Session the same way, so these rules live once:

- **title**: the `data.title` of the latest `session/title` event, when it is
  a non-empty string (anything else there means "no title").
- **preview**: the first line of the text of the first `message/user` whose
  `source.kind` is `"user"` (not a plugin's follow-up), stripped, at most
  `PREVIEW_LIMIT` characters; None until there is one.

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

__all__ = ["PREVIEW_LIMIT", "SummaryFacts", "preview_of", "title_of"]

PREVIEW_LIMIT = 200


def title_of(data: JsonValue) -> str | None:
    """The title a `session/title` event's data sets, or None."""
    title = data.get("title") if isinstance(data, dict) else None
    return title if isinstance(title, str) and title else None


def preview_of(data: JsonValue) -> str | None:
    """The preview a `message/user` event's data gives, or None if it is not the person's."""
    if not isinstance(data, dict):
        return None
    source, text = data.get("source"), data.get("text")
    if not isinstance(source, dict) or source.get("kind") != "user" or not isinstance(text, str):
        return None
    lines = text.strip().splitlines()
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
