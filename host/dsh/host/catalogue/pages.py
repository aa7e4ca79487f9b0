"""History pages: which events a page holds, and the page itself (DESIGN §9).

A page is `{"header","events","views","attached","tail"}`, where `views` maps
`"<seq>"` to the view of each event on the page that has one. `PageRequest`
says which events (`from_seq`, `before` or the last `limit`), `page_bounds`
turns that into seqs, `HistoryPage` is the answer (built by
`StorageReader.page`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...session.event import SessionEvent
from ...session.header import SessionHeader

__all__ = ["HistoryPage", "PageRequest", "page_bounds"]


@dataclass(frozen=True, slots=True)
class PageRequest:
    """Which events a page holds: `from_seq` (seq ≥ N, oldest first), `before`
    (the `limit` events just below N), or neither (the last `limit`)."""

    from_seq: int | None = None
    before: int | None = None
    limit: int = 100

    def __post_init__(self) -> None:
        if self.from_seq is not None and self.before is not None:
            raise ValueError("a page is either from a seq or before a seq, not both")


def page_bounds(tail: int, request: PageRequest) -> tuple[int, int]:
    """The `[start, stop)` seqs of the page `request` selects in a log of `tail` events."""
    if request.from_seq is not None:
        start = min(request.from_seq, tail)
        return start, min(start + request.limit, tail)
    stop = tail if request.before is None else min(request.before, tail)
    return max(0, stop - request.limit), stop


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of one Session's history with the views storage can vouch for.

    `attached` is True when the events came from the live Session (views only
    on its proven stored prefix), False when they came from storage.
    """

    header: SessionHeader
    events: list[SessionEvent]
    tail: int
    attached: bool
    views: dict[int, dict[str, Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The public JSON form."""
        return {
            "header": self.header.to_dict(),
            "events": [event.to_dict() for event in self.events],
            "views": {str(seq): view for seq, view in self.views.items()},
            "attached": self.attached,
            "tail": self.tail,
        }
