"""`Delivery`: one alert to one target of one channel, as the outbox keeps it.

A delivery is keyed by `(session_id, seq, channel, target)` (`key`): the
alert feed may hand an alert over again after a crash, and recording the
same key twice changes nothing. Its `state`:

- `pending`: to be sent at `next_at` (epoch ms, the Host's clock);
- `done`: the channel accepted it;
- `failed`: the channel rejected it, or it still wanted a retry after
  `max_attempts` sends;
- `gone`: the target no longer exists (a subscription the push service
  dropped, a URL no longer configured).

Only `pending` moves, and only to another state or to a later attempt.
`attempts` counts the sends made; `error` is the last reason a send gave
(a sentence without secrets). `updated` (epoch ms) orders finished records
for pruning, oldest first.

`to_json` / `from_json` are the one stored form of a delivery, shared by the
file and the tables, so that what a JSONL store keeps and what PostgreSQL
keeps cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from dsh import SnoozeAction

from ..channel import Message

__all__ = ["FINISHED", "STATES", "Delivery", "State", "delivery_key"]

State = Literal["pending", "done", "failed", "gone"]
STATES: tuple[State, ...] = ("pending", "done", "failed", "gone")
FINISHED: frozenset[str] = frozenset({"done", "failed", "gone"})


def delivery_key(session_id: str, seq: int, channel: str, target: str) -> str:
    """The idempotency key: one delivery per alert, channel and target."""
    return f"{session_id}/{seq}/{channel}/{target}"


class _StoredMessage(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    session_id: str
    seq: int
    title: str
    body: str
    tag: str
    at: int
    url: str
    snooze: SnoozeAction | None = None


class _StoredDelivery(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    channel: str
    target: str
    message: _StoredMessage
    state: State
    attempts: int
    next_at: int
    error: str | None
    created: int
    updated: int


def _message_json(message: Message) -> dict[str, Any]:
    snooze = None if message.snooze is None else message.snooze.model_dump(mode="json")
    return {
        "session_id": message.session_id,
        "seq": message.seq,
        "title": message.title,
        "body": message.body,
        "tag": message.tag,
        "at": message.at,
        "url": message.url,
        "snooze": snooze,
    }


@dataclass(frozen=True, slots=True)
class Delivery:
    """One alert to one target (see the module docstring)."""

    channel: str
    target: str
    message: Message
    state: State = "pending"
    attempts: int = 0
    next_at: int = 0
    error: str | None = None
    created: int = 0
    updated: int = 0

    @classmethod
    def new(cls, channel: str, target: str, message: Message, now: int) -> Delivery:
        """A pending delivery, due at once."""
        return cls(channel, target, message, next_at=now, created=now, updated=now)

    @property
    def key(self) -> str:
        return delivery_key(self.message.session_id, self.message.seq, self.channel, self.target)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    def moved(
        self, state: State, *, attempts: int, next_at: int, error: str | None, now: int
    ) -> Delivery:
        """This delivery after a send: its new state, attempts, due time and last error."""
        return replace(
            self, state=state, attempts=attempts, next_at=next_at, error=error, updated=now
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "target": self.target,
            "message": _message_json(self.message),
            "state": self.state,
            "attempts": self.attempts,
            "next_at": self.next_at,
            "error": self.error,
            "created": self.created,
            "updated": self.updated,
        }

    @classmethod
    def from_json(cls, value: JsonValue) -> Delivery:
        """A delivery from `to_json`'s form; pydantic's `ValidationError` if it is not one."""
        stored = _StoredDelivery.model_validate(value)
        kept = stored.message
        message = Message(
            kept.session_id,
            kept.seq,
            kept.title,
            kept.body,
            kept.tag,
            kept.at,
            kept.url,
            kept.snooze,
        )
        return cls(
            stored.channel,
            stored.target,
            message,
            stored.state,
            stored.attempts,
            stored.next_at,
            stored.error,
            stored.created,
            stored.updated,
        )
