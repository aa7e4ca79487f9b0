"""What the English and Chinese phrasings share: prompts, clock times, quoted ids."""

from __future__ import annotations

from typing import Final

__all__ = ["ID", "LINK_WORDS", "QUOTES", "clean_prompt", "day_hour", "valid_time"]

QUOTES: Final = "\"'`“”‘’「」"
LINK_WORDS: Final = frozenset({"to", "that", "about"})
_TRAILING = " \t.!?。！？~～，,"
ID: Final = rf"[{QUOTES}]?(?P<id>rem-\d+)[{QUOTES}]?"
"""A reminder id, optionally quoted."""


def clean_prompt(prompt: str) -> str | None:
    """The prompt without trailing punctuation or quotes; None when nothing is left."""
    prompt = prompt.strip().rstrip(_TRAILING).strip().strip(QUOTES).strip()
    if not prompt or prompt.lower() in LINK_WORDS:
        return None
    return prompt


def valid_time(hour: int, minute: int) -> bool:
    return 0 <= hour <= 23 and 0 <= minute <= 59


def day_hour(hour: int, afternoon: bool, morning: bool = False) -> int:
    """`hour` on a 24-hour clock: an afternoon 3 is 15, a morning 12 is 0."""
    if afternoon and hour < 12:
        return hour + 12
    if morning and hour == 12:
        return 0
    return hour
