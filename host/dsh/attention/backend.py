"""Where alerts and read marks are kept: the `AttentionBackend` interface.

Per Session, a backend keeps:

- `checked`: how far (a seq, exclusive) the Host derived alerts from the
  Session's stored log; None when it never recorded anything for it. The
  Host derives from there when the Session next goes live, so an alert
  whose event was stored just before a crash is still found (a Session
  without an entry is derived from where its previous lifecycle began);
- its **alerts** (`Alert`, at most one per event seq: recording one again
  changes nothing);
- its **read mark**: every alert with a seq below it is read. A mark only
  moves forward.

The unread count of a Session is the number of its alerts at or after its
read mark. Read marks are the person's, not derivable from any log, so a
backend never drops one it acknowledged; alerts that are read and older
than `KEEP_READ_MS` may be forgotten (they are only kept to replay recent
alerts to a page that reconnects, `since`).

Every method returns once what it was given is durable, or raises
`StorageError`. `MemoryAttentionBackend` keeps it all in memory (tests, the
`memory:` store); `dsh.attention.jsonl` in a file beside the logs;
`dsh.attention.postgres` in tables every host of a database shares
(`shared`).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import anyio

from .alert import Alert

__all__ = [
    "KEEP_READ_MS",
    "AttentionBackend",
    "AttentionRecord",
    "AttentionState",
    "Changed",
    "MemoryAttentionBackend",
]

#: What a shared backend calls for each change: the Session's id and the alerts it added.
Changed = Callable[[str, Sequence[int]], None]

#: A read alert is kept this long after it was stored (for pages that reconnect).
KEEP_READ_MS = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class AttentionRecord:
    """Everything kept for one Session: `checked`, the read mark and the alerts (by seq).

    What `AttentionBackend.records` returns, so that a copy of the store can
    give another backend the same state (`record`, then `read`).
    """

    session_id: str
    checked: int | None
    read: int
    alerts: tuple[Alert, ...]


class AttentionBackend(abc.ABC):
    """Alerts and read marks, per Session (see the module docstring)."""

    #: True when several hosts share it (each one's alerts reach the others).
    shared: bool = False
    description: str = "the attention store"

    async def open(self) -> None:
        """Load what is kept (a backend that reads on demand does nothing)."""
        return None

    @abc.abstractmethod
    async def checked(self, session_id: str) -> int | None:
        """How far alerts were derived for the Session, or None if never."""

    @abc.abstractmethod
    async def record(self, session_id: str, alerts: Sequence[Alert], checked: int) -> int:
        """Keep `alerts` of the Session and move its `checked` forward to `checked`;
        its unread count after."""

    @abc.abstractmethod
    async def read(self, session_id: str, through: int) -> int:
        """Move the Session's read mark forward to `through`; its unread count after."""

    @abc.abstractmethod
    async def forget(self, session_id: str) -> None:
        """Drop everything kept for the Session (it was deleted)."""

    @abc.abstractmethod
    async def unread(self, session_ids: Collection[str] | None = None) -> dict[str, int]:
        """The unread count of each of `session_ids` (None: every Session) that has any."""

    @abc.abstractmethod
    async def since(self, at: int, limit: int) -> list[Alert]:
        """Alerts stored after epoch ms `at`, oldest first, at most `limit` (the newest)."""

    @abc.abstractmethod
    async def alerts(self, session_id: str, seqs: Collection[int]) -> list[Alert]:
        """The Session's alerts of `seqs` that are kept, by seq."""

    @abc.abstractmethod
    async def records(self) -> list[AttentionRecord]:
        """Everything kept, per Session, sorted by id (alerts by seq)."""

    async def listen(self, changed: Changed) -> None:
        """Until cancelled, call `changed(session_id, seqs)` for each change any host
        made (`seqs`: the alerts it added). Only a `shared` backend has to."""
        await anyio.sleep_forever()

    async def aclose(self) -> None:
        return None


@dataclass(slots=True)
class _Entry:
    checked: int | None = None
    read: int = 0
    alerts: dict[int, Alert] = field(default_factory=dict)

    def unread(self) -> int:
        return sum(1 for seq in self.alerts if seq >= self.read)


class AttentionState:
    """The whole state in memory, as the memory and file backends keep it."""

    def __init__(self, clock: Callable[[], int] | None = None) -> None:
        self.entries: dict[str, _Entry] = {}
        self._now = clock

    def checked(self, session_id: str) -> int | None:
        entry = self.entries.get(session_id)
        return None if entry is None else entry.checked

    def record(self, session_id: str, alerts: Sequence[Alert], checked: int) -> int:
        entry = self.entries.setdefault(session_id, _Entry())
        entry.checked = checked if entry.checked is None else max(entry.checked, checked)
        for alert in alerts:
            entry.alerts.setdefault(alert.seq, alert)
        return entry.unread()

    def read(self, session_id: str, through: int) -> int:
        entry = self.entries.setdefault(session_id, _Entry())
        entry.read = max(entry.read, through)
        if self._now is not None:
            self.prune(self._now())
        return entry.unread()

    def forget(self, session_id: str) -> None:
        self.entries.pop(session_id, None)

    def unread(self, session_ids: Collection[str] | None = None) -> dict[str, int]:
        counts = {}
        for session_id in self.entries if session_ids is None else session_ids:
            entry = self.entries.get(session_id)
            count = 0 if entry is None else entry.unread()
            if count:
                counts[session_id] = count
        return counts

    def since(self, at: int, limit: int) -> list[Alert]:
        found = [
            alert
            for entry in self.entries.values()
            for alert in entry.alerts.values()
            if alert.at > at
        ]
        found.sort(key=lambda alert: (alert.at, alert.session_id, alert.seq))
        return found[-limit:] if limit > 0 else []

    def alerts(self, session_id: str, seqs: Collection[int]) -> list[Alert]:
        entry = self.entries.get(session_id)
        kept = {} if entry is None else entry.alerts
        return [kept[seq] for seq in sorted(set(seqs)) if seq in kept]

    def records(self) -> list[AttentionRecord]:
        return [
            AttentionRecord(
                session_id,
                entry.checked,
                entry.read,
                tuple(alert for _, alert in sorted(entry.alerts.items())),
            )
            for session_id, entry in sorted(self.entries.items())
        ]

    def prune(self, now: int) -> None:
        """Forget read alerts older than `KEEP_READ_MS` (read marks and checks stay)."""
        for entry in self.entries.values():
            for seq in [
                seq
                for seq, alert in entry.alerts.items()
                if seq < entry.read and alert.at < now - KEEP_READ_MS
            ]:
                del entry.alerts[seq]


class MemoryAttentionBackend(AttentionBackend):
    """Everything in memory: lost with the process (tests, `memory:`)."""

    description = "the attention store in memory"

    def __init__(self) -> None:
        self.state = AttentionState()

    async def checked(self, session_id: str) -> int | None:
        return self.state.checked(session_id)

    async def record(self, session_id: str, alerts: Sequence[Alert], checked: int) -> int:
        return self.state.record(session_id, alerts, checked)

    async def read(self, session_id: str, through: int) -> int:
        return self.state.read(session_id, through)

    async def forget(self, session_id: str) -> None:
        self.state.forget(session_id)

    async def unread(self, session_ids: Collection[str] | None = None) -> dict[str, int]:
        return self.state.unread(session_ids)

    async def since(self, at: int, limit: int) -> list[Alert]:
        return self.state.since(at, limit)

    async def alerts(self, session_id: str, seqs: Collection[int]) -> list[Alert]:
        return self.state.alerts(session_id, seqs)

    async def records(self) -> list[AttentionRecord]:
        return self.state.records()
