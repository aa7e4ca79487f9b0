"""Reminder ids: branded, Session-local, never reused within a fold.

An id is `rem-<n>` where `n` is a positive decimal integer without leading
zeros and at most 2^53-1 (so every JSON reader holds it exactly). The fold
hands out `rem-<m+1>`, where `m` is the largest number it has seen; for a log
written only by this plugin that is one more than the number of creates.
"""

from __future__ import annotations

import re
from typing import NewType

__all__ = [
    "MAX_REMINDER_NUMBER",
    "REMINDER_ID_PATTERN",
    "ReminderId",
    "format_reminder_id",
    "parse_reminder_id",
]

ReminderId = NewType("ReminderId", str)

MAX_REMINDER_NUMBER = 2**53 - 1
REMINDER_ID_PATTERN = re.compile(r"rem-([1-9][0-9]{0,15})")


def parse_reminder_id(text: str) -> tuple[ReminderId, int]:
    """Return `(id, n)` for a well-formed id; raise `ValueError` naming the problem."""
    match = REMINDER_ID_PATTERN.fullmatch(text)
    if match is None or int(match.group(1)) > MAX_REMINDER_NUMBER:
        raise ValueError(
            f"{text!r} is not a reminder id: expected 'rem-<n>' with n a positive integer "
            f"without leading zeros, at most {MAX_REMINDER_NUMBER}"
        )
    return ReminderId(text), int(match.group(1))


def format_reminder_id(number: int) -> ReminderId:
    """The id `rem-<number>`; raise `ValueError` when `number` is out of range."""
    if not 1 <= number <= MAX_REMINDER_NUMBER:
        raise ValueError(f"reminder number {number} is outside 1..{MAX_REMINDER_NUMBER}")
    return ReminderId(f"rem-{number}")
