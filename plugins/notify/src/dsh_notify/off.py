"""`OffChannel`: a channel the overlay turned off, so that what it left in the outbox ends.

A delivery recorded while Web Push was on stays pending in the outbox when
a restart turns it off; the sender claims it from this stand-in, which has
no targets (nothing new is recorded for it) and answers every send `Gone`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .channel import Gone, Message, Outcome

__all__ = ["OffChannel"]


class OffChannel:
    """Channel `name`, turned off: no targets; each send is `Gone(reason)`."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    async def targets(self) -> Sequence[str]:
        return []

    async def send(self, target: str, message: Message) -> Outcome:
        return Gone(self.reason)
