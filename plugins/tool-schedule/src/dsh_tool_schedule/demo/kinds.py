"""The demo model's intents: what one user message asks of the reminder tools (`intents`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

__all__ = [
    "All",
    "AskWhen",
    "ById",
    "Change",
    "Create",
    "CreateAt",
    "CreateDaily",
    "CreateEvery",
    "Creation",
    "Delete",
    "Intent",
    "List",
    "Matching",
    "Move",
    "SetPaused",
    "Target",
    "Unclear",
]


@dataclass(frozen=True, slots=True)
class Create:
    prompt: str
    after_seconds: int


@dataclass(frozen=True, slots=True)
class CreateAt:
    prompt: str
    day: date | None
    """None: no day was said — today, or tomorrow once the time has passed (the answer says so)."""
    hour: int
    minute: int


@dataclass(frozen=True, slots=True)
class CreateDaily:
    prompt: str
    hour: int
    minute: int
    days: str = "*"
    """The cron day-of-week field: `*` (every day), `MON-FRI`, `MON`, …"""


@dataclass(frozen=True, slots=True)
class CreateEvery:
    prompt: str
    seconds: int


@dataclass(frozen=True, slots=True)
class AskWhen:
    """A reminder without a time: the demo asks when (the next message may say)."""

    prompt: str


@dataclass(frozen=True, slots=True)
class List:
    pass


@dataclass(frozen=True, slots=True)
class ById:
    id: str


@dataclass(frozen=True, slots=True)
class Matching:
    """The reminders whose prompt contains each of these words (case-insensitive)."""

    words: str


@dataclass(frozen=True, slots=True)
class All:
    pass


Target = ById | Matching | All


@dataclass(frozen=True, slots=True)
class Delete:
    target: Target


@dataclass(frozen=True, slots=True)
class SetPaused:
    target: Target
    paused: bool


@dataclass(frozen=True, slots=True)
class Move:
    target: Target
    hour: int
    minute: int
    day: date | None = None
    """None: the reminder's own day (or the next one, when that time has passed)."""


@dataclass(frozen=True, slots=True)
class Unclear:
    pass


Creation = Create | CreateAt | CreateDaily | CreateEvery
Change = Delete | SetPaused | Move
"""Intents that act on reminders: by id, or after `schedule_list` says which match."""
Intent = Creation | AskWhen | List | Change | Unclear
