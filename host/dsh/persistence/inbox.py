"""The inbox: messages posted on one host for a Session another host owns (DESIGN §4).

A store shared by several hosts (PostgreSQL) gives its Hosts an `Inbox`
(`Backend.inbox()`; a store only one process writes has none). A message
posted to a host that does not own the Session is stored as an inbox row
(`post`), and its owner is woken (a notification carries the Session id and
nothing else: the rows are the truth). The owner takes the rows in order
(`pending`), queues each as it would a local message, and removes a row
(`remove`) once the `message/user` it became is stored; a row whose message
is already in the log (an owner that died after storing it) is removed, not
queued again. Rows of a Session no host holds (`orphaned`) are found by
polling: some host then makes that Session live and takes them.

`dsh.relay.messages.InboxRelay` is the host side of it.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Collection
from dataclasses import dataclass

__all__ = ["INBOX_SOURCE_KEY", "Inbox", "InboxMessage"]

#: The key of a relayed `message/user`'s source that names its inbox row, so that
#: a new owner never queues a stored message again.
INBOX_SOURCE_KEY = "inbox"


@dataclass(frozen=True, slots=True)
class InboxMessage:
    """One posted message waiting for its Session's owner."""

    id: int
    session_id: str
    text: str
    time_zone: str | None
    via: str  # the host it was posted to


class Inbox(abc.ABC):
    """Messages on their way to the host that owns their Session (module docstring)."""

    #: How often `orphaned` is polled and notifications are made up for.
    poll_seconds: float = 1.0

    @abc.abstractmethod
    async def post(self, session_id: str, text: str, time_zone: str | None, via: str) -> int:
        """Store the message durably and wake the Session's owner; returns its id.
        Raises `StorageError`."""

    @abc.abstractmethod
    async def pending(self, session_id: str) -> list[InboxMessage]:
        """The Session's messages not yet removed, oldest first."""

    @abc.abstractmethod
    async def waiting(self, session_ids: Collection[str]) -> set[str]:
        """Which of `session_ids` have messages (one query, for many live Sessions)."""

    @abc.abstractmethod
    async def remove(self, ids: Collection[int]) -> None:
        """Forget these messages (stored in their logs, or their Session is gone)."""

    @abc.abstractmethod
    async def orphaned(self) -> list[str]:
        """Sessions with messages that no host holds a valid lease on."""

    @abc.abstractmethod
    async def listen(self, woken: Callable[[str], None]) -> None:
        """Call `woken(session_id)` for every message posted (by any host), until
        cancelled. Reconnects after a failure (a missed wake-up is made up for by
        polling). Never returns otherwise."""

    async def aclose(self) -> None:
        """Release what the inbox holds open. The default holds nothing."""
        return None
