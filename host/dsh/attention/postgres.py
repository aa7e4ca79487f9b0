"""`PostgresAttentionBackend`: alerts and read marks of every host on one database.

Two tables (migration 7): `attention` (per Session: `checked`,
`read_through`) and `attention_alerts` (one row per alert, keyed by
`(session_id, seq)`). Each change is one transaction on a pooled connection
of the Host's backend and ends with `pg_notify` on the schema's `attention`
channel, so the notification is sent when (and only if) the change is
committed. Its payload is `{"id": <session>, "seqs": [<alerts added>]}`:
every host's `listen` hears it (its own changes too) and reads what it
names, which is how a page on one host hears of an alert another host
derived, or of a read made there. A notification missed while a listening
connection was down is not made up for: counts are read afresh by every
page that (re)connects.

Read marks move forward only (`greatest`), an alert already kept is kept
unchanged (`ON CONFLICT DO NOTHING`): two hosts racing on one Session agree.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from ..persistence.postgres.notify import Listener, channel
from ..persistence.postgres.text import shown
from ..session.ids import validate_session_id
from .alert import Alert
from .backend import KEEP_READ_MS, AttentionBackend, AttentionRecord, Changed

if TYPE_CHECKING:
    from ..persistence.postgres.backend import PostgresBackend
    from ..persistence.postgres.database import Connection

__all__ = ["PostgresAttentionBackend"]

log = logging.getLogger(__name__)

_COLUMNS = "session_id, seq, title, body, tag, at"

_RECORD_ALERTS = f"""
INSERT INTO attention_alerts ({_COLUMNS})
SELECT * FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[], %s::text[], %s::bigint[])
ON CONFLICT (session_id, seq) DO NOTHING
"""

_CHECKED = """
INSERT INTO attention AS a (session_id, checked) VALUES (%s, %s)
ON CONFLICT (session_id) DO UPDATE SET checked = greatest(a.checked, EXCLUDED.checked)
"""

_READ = """
INSERT INTO attention AS a (session_id, read_through) VALUES (%s, %s)
ON CONFLICT (session_id) DO UPDATE
    SET read_through = greatest(a.read_through, EXCLUDED.read_through)
"""

_UNREAD = """
SELECT x.session_id, count(*) FROM attention_alerts x
LEFT JOIN attention a ON a.session_id = x.session_id
WHERE x.seq >= coalesce(a.read_through, 0) {where}
GROUP BY x.session_id
"""

_PRUNE = """
DELETE FROM attention_alerts x USING attention a
WHERE a.session_id = %s AND x.session_id = a.session_id
  AND x.seq < a.read_through AND x.at < %s
"""


class PostgresAttentionBackend(AttentionBackend):
    """Alerts and read marks in the tables every host on `backend`'s database shares."""

    shared = True

    def __init__(self, backend: PostgresBackend, *, now: Callable[[], int] | None = None) -> None:
        self.database = backend.database
        self._now = now or (lambda: int(time.time() * 1000))
        self.description = f"the attention tables in {backend.describe()}"
        self.channel = channel("attention", self.database.settings.schema_name)
        self._listener = Listener(self.database, self.channel, "attention")

    async def checked(self, session_id: str) -> int | None:
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "SELECT checked FROM attention WHERE session_id = %s", (session_id,)
            )
            row = await cursor.fetchone()
        return None if row is None or row[0] is None else int(row[0])

    async def record(self, session_id: str, alerts: Sequence[Alert], checked: int) -> int:
        async with self.database.connection() as connection, connection.transaction():
            if alerts:
                columns = zip(
                    *(
                        (a.session_id, a.seq, shown(a.title), shown(a.body), shown(a.tag), a.at)
                        for a in alerts
                    ),
                    strict=True,
                )
                await connection.execute(_RECORD_ALERTS, [list(column) for column in columns])
                await self._notify(connection, session_id, [alert.seq for alert in alerts])
            await connection.execute(_CHECKED, (session_id, checked))
            return await self._count(connection, session_id)

    async def read(self, session_id: str, through: int) -> int:
        async with self.database.connection() as connection, connection.transaction():
            await connection.execute(_READ, (session_id, through))
            await connection.execute(_PRUNE, (session_id, self._now() - KEEP_READ_MS))
            await self._notify(connection, session_id, [])
            return await self._count(connection, session_id)

    async def forget(self, session_id: str) -> None:
        async with self.database.connection() as connection, connection.transaction():
            await connection.execute(
                "DELETE FROM attention_alerts WHERE session_id = %s", (session_id,)
            )
            await connection.execute("DELETE FROM attention WHERE session_id = %s", (session_id,))
            await self._notify(connection, session_id, [])

    async def unread(self, session_ids: Collection[str] | None = None) -> dict[str, int]:
        if session_ids is not None and not session_ids:
            return {}
        where = "" if session_ids is None else "AND x.session_id = ANY(%s::text[])"
        arguments = () if session_ids is None else (list(session_ids),)
        async with self.database.connection() as connection:
            cursor = await connection.execute(_UNREAD.format(where=where), arguments)
            return {str(key): int(count) for key, count in await cursor.fetchall()}

    async def since(self, at: int, limit: int) -> list[Alert]:
        if limit <= 0:
            return []
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                f"SELECT {_COLUMNS} FROM attention_alerts WHERE at > %s"
                " ORDER BY at DESC, session_id DESC, seq DESC LIMIT %s",
                (at, limit),
            )
            rows = await cursor.fetchall()
        return [_alert(row) for row in reversed(rows)]

    async def alerts(self, session_id: str, seqs: Collection[int]) -> list[Alert]:
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                f"SELECT {_COLUMNS} FROM attention_alerts"
                " WHERE session_id = %s AND seq = ANY(%s::bigint[]) ORDER BY seq",
                (session_id, sorted(set(seqs))),
            )
            return [_alert(row) for row in await cursor.fetchall()]

    async def records(self) -> list[AttentionRecord]:
        async with self.database.connection() as connection, connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await connection.execute(
                "SELECT session_id, checked, read_through FROM attention"
            )
            marks = {str(sid): (checked, read) for sid, checked, read in await cursor.fetchall()}
            cursor = await connection.execute(
                f"SELECT {_COLUMNS} FROM attention_alerts ORDER BY session_id, seq"
            )
            alerts = [_alert(row) for row in await cursor.fetchall()]
        kept: dict[str, list[Alert]] = {}
        for alert in alerts:
            kept.setdefault(alert.session_id, []).append(alert)
        records = []
        for session_id in sorted(marks.keys() | kept.keys()):
            checked, read = marks.get(session_id, (None, 0))
            records.append(
                AttentionRecord(
                    session_id,
                    None if checked is None else int(checked),
                    int(read),
                    tuple(kept.get(session_id, ())),
                )
            )
        return records

    async def listen(self, changed: Changed) -> None:
        def heard(payload: str) -> None:
            try:
                message = json.loads(payload)
                session_id = validate_session_id(message["id"])
                seqs = [int(seq) for seq in message["seqs"]]
            except (ValueError, KeyError, TypeError) as error:
                log.warning("ignoring a malformed attention notification %r: %s", payload, error)
                return
            changed(session_id, seqs)

        await self._listener.listen(heard)

    @property
    def listening(self) -> int:
        """Connections in LISTEN for attention changes now."""
        return self._listener.listening

    async def _notify(self, connection: Connection, session_id: str, seqs: list[int]) -> None:
        payload = json.dumps({"id": session_id, "seqs": seqs}, separators=(",", ":"))
        await connection.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))

    @staticmethod
    async def _count(connection: Connection, session_id: str) -> int:
        cursor = await connection.execute(
            _UNREAD.format(where="AND x.session_id = %s"), (session_id,)
        )
        row = await cursor.fetchone()
        return 0 if row is None else int(row[1])


def _alert(row: Sequence[object]) -> Alert:
    session_id, seq, title, body, tag, at = row
    return Alert(str(session_id), int(str(seq)), str(title), str(body), str(tag), int(str(at)))
