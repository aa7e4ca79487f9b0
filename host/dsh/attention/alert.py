"""`Alert`: one durable event a plugin says a person should hear of.

What a plugin answers (`dsh_session_alert`) is checked at the boundary
(`AlertContent`: a non-empty `title`, a `body`, a `tag`; bounded lengths,
no control characters); the Host stamps it with where it came from (the
Session, the event's seq) and when the event was stored (`at`, the event's
own time, epoch ms). Its frame (`to_frame`) is what `WS /api/live` sends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StringConstraints

__all__ = ["MAX_BODY", "MAX_TAG", "MAX_TITLE", "Alert", "AlertContent"]

MAX_TITLE = 200
MAX_BODY = 1000
MAX_TAG = 200
# No control characters: titles and bodies end up in system notifications.
_TEXT = r"^[^\x00-\x08\x0b-\x1f\x7f]*$"


class AlertContent(BaseModel):
    """What a plugin's `dsh_session_alert` returns: `{"title", "body", "tag"}`."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    title: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TITLE, pattern=_TEXT)]
    body: Annotated[str, StringConstraints(max_length=MAX_BODY, pattern=_TEXT)] = ""
    tag: Annotated[str, Field(min_length=1, max_length=MAX_TAG, pattern=r"^[^\x00-\x1f\x7f]*$")]


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert of Session `session_id`: its event's `seq` and the time it was stored."""

    session_id: str
    seq: int
    title: str
    body: str
    tag: str
    at: int

    @classmethod
    def of(cls, session_id: str, seq: int, at: int, content: AlertContent) -> Alert:
        return cls(session_id, seq, content.title, content.body, content.tag, at)

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
