"""`Channel`: one way an alert reaches a person, and what a send answers.

A channel has *targets* (a Web Push subscription, an Apprise URL): the
outbox records one delivery per alert and target before anything is sent,
then calls `send(target, message)` until the channel answers for good:

- `Accepted`: the service took it — the delivery is done;
- `Retry(reason, after)`: try again later (a 429 with its `Retry-After`, a
  5xx, a network error) — backed off, at most `max_attempts` in all;
- `Gone(reason)`: the target no longer exists (a push subscription answered
  404/410, a URL no longer configured) — the delivery is dropped, counted;
- `Rejected(reason)`: it will never be accepted (a 4xx that is not about
  the target) — the delivery is `failed` at once.

`send` never raises for what the service answered; an exception is a bug of
the channel, treated as `Retry`. Reasons are sentences for logs and the
page: they never carry a secret (a token in a URL, a key).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dsh import SnoozeAction

__all__ = ["Accepted", "Channel", "Gone", "Message", "Outcome", "Rejected", "Retry"]


@dataclass(frozen=True, slots=True)
class Message:
    """What one alert says, as every channel sends it (the Web Push payload's fields)."""

    session_id: str
    seq: int
    title: str
    body: str
    tag: str
    at: int
    url: str
    snooze: SnoozeAction | None = None


@dataclass(frozen=True, slots=True)
class Accepted:
    pass


@dataclass(frozen=True, slots=True)
class Retry:
    reason: str
    after: float | None = None  # seconds the service asked for (Retry-After), if any


@dataclass(frozen=True, slots=True)
class Gone:
    reason: str


@dataclass(frozen=True, slots=True)
class Rejected:
    reason: str


Outcome = Accepted | Retry | Gone | Rejected


class Channel(Protocol):
    """One way to reach a person (see the module docstring)."""

    #: The `channel` label of `dsh_notify_deliveries_total`: "webpush", "apprise".
    name: str

    async def targets(self) -> Sequence[str]:
        """The targets an alert found now goes to (ids: no secrets, at most 200 characters)."""
        ...

    async def send(self, target: str, message: Message) -> Outcome:
        """Send `message` to `target`; what the service answered (module docstring)."""
        ...
