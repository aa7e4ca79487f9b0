"""One row of the Session list: what it shows, what a search matches, what counts as empty.

- **title** (public, `GET /api/sessions`): the title a person set (the latest
  `session/title`), else one taken from the first line of the person's first
  message, at most `TITLE_CHARS` characters (longer lines are cut at a word
  and end with `…`); `null` while there is neither.
- **updatedAt**: when the Session last changed (its last event, or the last
  write of its file; `createdAt` before any), what the list shows as its
  last activity.
- **plugins**: each plugin's compact summary of a live Session
  (`dsh_session_summary`), keyed by plugin name; `null` for a cold Session,
  whose summaries would need a read of every listed log.
- **search** (`?q=`): case-insensitive, over the title and the first line of
  the first message (what every backend lists without decoding a log), and
  the start of the id (what the page shows for a Session without a title).
- **empty**: a log holding nothing but `session/end-seed` markers (a Session
  made and never used; each resume adds a marker). The host moves such a
  Session to the trash when it goes cold (`Host(clean_empty_sessions=True)`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import JsonValue

from .facts import without_bidi
from .header import Lineage
from .log import SessionLog
from .types import END_SEED

__all__ = ["TITLE_CHARS", "SessionSummary", "derived_title", "is_empty"]

TITLE_CHARS = 60
# A cut at a word boundary keeps at least this much of the line; else it cuts mid-word.
_WORD_CUT_FLOOR = TITLE_CHARS // 2


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One row of the Session list.

    `title` is the latest `session/title`; `preview` the first line of the
    person's first message (searched, and the source of a derived title; not
    in the JSON form); `plugins` the plugins' compact summaries, None when
    they were not computed (a cold Session).
    """

    id: str
    created_at: int
    live: bool
    length: int
    lineage: Lineage | None
    title: str | None = None
    preview: str | None = None
    plugins: Mapping[str, JsonValue] | None = None
    updated_at: int | None = None

    @property
    def shown_title(self) -> str | None:
        """The title the list shows: the set one, else one derived from the preview.

        Without bidi controls, whatever an older index or column still holds
        (`dsh.session.facts`).
        """
        title = self.title and without_bidi(self.title).strip()
        return title or derived_title(self.preview)

    def matches(self, query: str) -> bool:
        """True if `query` (case-insensitive) is in the title or preview, or starts the id."""
        wanted = query.strip().casefold()
        if not wanted:
            return True
        return (
            self.id.casefold().startswith(wanted)
            or wanted in (self.title or "").casefold()
            or wanted in (self.preview or "").casefold()
        )

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "id": self.id,
            "createdAt": self.created_at,
            "live": self.live,
            "length": self.length,
            "lineage": None
            if self.lineage is None
            else self.lineage.model_dump(mode="json", by_alias=True),
            "title": self.shown_title,
            "plugins": None if self.plugins is None else dict(self.plugins),
            "updatedAt": self.created_at if self.updated_at is None else self.updated_at,
        }


def derived_title(preview: str | None) -> str | None:
    """A title from the first line of a first message: at most `TITLE_CHARS` characters."""
    if preview is None:
        return None
    line = " ".join(without_bidi(preview).split())
    if not line:
        return None
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if line[len(cut)] != " " and space >= _WORD_CUT_FLOOR:
        cut = cut[:space]  # the cut fell inside a word: drop the part of it
    return cut.rstrip(" ,.;:-") + "…"


def is_empty(log: SessionLog) -> bool:
    """True if the log holds nothing but `session/end-seed` markers (or nothing at all)."""
    return sum(1 for _ in log.scan(types={END_SEED})) == len(log)
