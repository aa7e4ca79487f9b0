"""`Alert`: one durable event a plugin says a person should hear of.

What a plugin answers (`dsh_session_alert`) is checked at the boundary
(`AlertContent`: a non-empty `title`, a `body`, a `tag`; bounded lengths,
no control characters; optionally `snooze`, the Session action that puts
it off); the Host stamps it with where it came from (the
Session, the event's seq) and when the event was stored (`at`, the event's
own time, epoch ms). Its frame (`to_frame`) is what `WS /api/live` sends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

__all__ = ["MAX_BODY", "MAX_TAG", "MAX_TITLE", "Alert", "AlertContent", "SnoozeAction"]

MAX_TITLE = 200
MAX_BODY = 1000
MAX_TAG = 200
# No control characters: titles and bodies end up in system notifications.
_TEXT = r"^[^\x00-\x08\x0b-\x1f\x7f]*$"


class SnoozeAction(BaseModel):
    """How to put an alert off: the Session action (`dsh_session_action`) `action` of
    `plugin`, called with `args` plus `"seconds"` (how long, chosen by the person)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    plugin: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    action: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    args: dict[str, JsonValue] = Field(default_factory=dict)


class AlertContent(BaseModel):
    """What a plugin's `dsh_session_alert` returns: `{"title", "body", "tag"}`, and
    optionally `"snooze"` (a `SnoozeAction`)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    title: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TITLE, pattern=_TEXT)]
    body: Annotated[str, StringConstraints(max_length=MAX_BODY, pattern=_TEXT)] = ""
    tag: Annotated[str, Field(min_length=1, max_length=MAX_TAG, pattern=r"^[^\x00-\x1f\x7f]*$")]
    snooze: SnoozeAction | None = None


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert of Session `session_id`: its event's `seq` and the time it was stored.

    `snooze` is what the plugin said when the alert was found (the feed's
    subscribers hear it); the attention store does not keep it, so an alert
    read back from there has None.
    """

    session_id: str
    seq: int
    title: str
    body: str
    tag: str
    at: int
    snooze: SnoozeAction | None = field(default=None, compare=False)

    @classmethod
    def of(cls, session_id: str, seq: int, at: int, content: AlertContent) -> Alert:
        return cls(session_id, seq, content.title, content.body, content.tag, at, content.snooze)

    def to_frame(self) -> dict[str, JsonValue]:
        """`{"kind": "alert", "sessionId", "seq", "title", "body", "tag", "at"}` (public)."""
        return {
            "kind": "alert",
            "sessionId": self.session_id,
            "seq": self.seq,
            "title": self.title,
            "body": self.body,
            "tag": self.tag,
            "at": self.at,
        }
