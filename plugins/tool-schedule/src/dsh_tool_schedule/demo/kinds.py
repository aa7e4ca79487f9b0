"""The demo model's intents: what one user message asks of the reminder tools (`intents`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Change",
    "Create",
    "CreateAt",
    "CreateDaily",
    "CreateEvery",
    "Creation",
    "Delete",
    "Intent",
    "List",
    "Move",
    "SetPaused",
    "Unclear",
]


@dataclass(frozen=True, slots=True)
class Create:
    prompt: str
    after_seconds: int


@dataclass(frozen=True, slots=True)
class CreateAt:
    prompt: str
    day: int
    """0 today, 1 tomorrow, 2 the day after, in the person's zone."""
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
class List:
    pass


@dataclass(frozen=True, slots=True)
class Delete:
    id: str


@dataclass(frozen=True, slots=True)
class SetPaused:
    id: str
    paused: bool


@dataclass(frozen=True, slots=True)
class Move:
    id: str
    hour: int
    minute: int
    day: int | None = None
    """None: the reminder's own day (or the next one, when that time has passed)."""


@dataclass(frozen=True, slots=True)
class Unclear:
    pass


Creation = Create | CreateAt | CreateDaily | CreateEvery
Change = SetPaused | Move
"""Intents that first read the reminder (`schedule_list`), then update it."""
Intent = Creation | List | Delete | Change | Unclear
