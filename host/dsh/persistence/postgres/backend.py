"""`PostgresBackend`: the Session store for more than one host (DESIGN §4).

The same `Backend` contract as the JSONL store, over the tables of
`schema` (read its docstring for the layout):

- `initialize` and `append` are one statement each (`dsh_create`,
  `dsh_append`): one round trip and one transaction that locks the
  Session's row, checks the writer's lease epoch and the cursor, inserts the
  batch and updates the list summary (title, preview, length). The batch's
  types and texts travel as binary arrays (`%b`): a text-format array
  escapes every quote of every event's JSON in Python, which cost more than
  the rest of an append's client side. A batch that
  does not continue at the cursor raises `IntegrityError`; a writer whose
  lease lapsed gets `LeaseLost`; nothing is stored in either case.
- **Group commit.** Appends of several Sessions that meet while others
  are being committed go together (`rounds`, `rounds.py`): one statement
  (`dsh_append_round`) and one transaction, each Session's append fenced
  and checked as alone in a subtransaction of its own, so one refusal
  fails alone. An append that meets no other is sent alone as above. At
  most half the pool's connections commit rounds at once.
- Reads are one statement: `header`, `cursor` and `mark` read the Session's
  row; `read` selects a seq range, type-filtered through an index on
  `(log_id, type, seq)`; `list` reads only the `sessions` table.
- Each event's stored text is parsed and validated like a JSONL line; a row
  that does not parse, or whose seq is not its key, raises `CorruptLog`.
- `trash` marks the row deleted; `restore` clears the mark and gives the log
  a new incarnation; `trashed` and `inspect_trashed` read the marked rows.

`lease_backend(owner)` returns the `PostgresLeases` whose leases this
backend's writes are fenced with; `inbox()` the `PostgresInbox` through
which messages reach the host that owns their Session, `remote_actions()`
the `PostgresRemoteActions` through which actions do.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

import psycopg
from pydantic import ValidationError

from ...session.event import SessionEvent
from ...session.facts import SummaryFacts, title_of
from ...session.header import Lineage, SessionHeader
from ...session.ids import validate_session_id
from ...session.types import SESSION_TITLE
from ..backend import (
    Backend,
    Events,
    LogMark,
    SessionIds,
    StoredSession,
    StoredSummary,
    check_contiguous,
)
from ..errors import (
    CorruptLog,
    IntegrityError,
    LeaseHeld,
    LeaseLost,
    SessionExists,
    SessionNotFound,
    StorageError,
    StorageRefused,
)
from ..leases import DEFAULT_LEASE_TTL_SECONDS
from .database import Database
from .feed import PostgresEventFeed
from .inbox import PostgresInbox
from .leases import PostgresLeases
from .remote_actions import PostgresRemoteActions
from .rounds import Append, Rounds
from .schema import ERRORS
from .settings import PostgresSettings
from .text import shown

__all__ = ["PostgresBackend"]

log = logging.getLogger(__name__)

# What a list row needs; the last event's time is one primary-key lookup per Session. It
# is read from the canonical text (`{"seq":…,"type":…,"time":…,"data":…}`: the envelope's
# "time" comes before any data), not through `json`, which refuses an escaped NUL in data.
_SUMMARY_COLUMNS = (
    "created_at, length, parent_id, forked_at, title, preview, (SELECT substring(e.body FROM"
    ' \'^[^{]*[{]"seq":[0-9]+,"type":"[^"]*","time":(-?[0-9]+)\')::bigint'
    " FROM events e WHERE e.log_id = sessions.log_id AND e.seq = sessions.length - 1)"
)


# SQLSTATE classes a retry of the same values meets again: 22 data exception, 54 program
# limit exceeded.
_REFUSED_CLASSES = ("22", "54")


def _value_refused(state: str | None, data: bool) -> bool:
    """Whether a value was refused (`data`: psycopg's dumpers refused it before sending,
    or the server's SQLSTATE is of a class above): the same values fail every time."""
    return data or (state or "").startswith(_REFUSED_CLASSES)


def _summary(session_id: str, *row: Any) -> StoredSummary:
    created_at, length, parent, forked_at, title, preview, updated_at = row
    lineage = None if parent is None else Lineage(parentId=parent, forkedAt=forked_at)
    return StoredSummary(
        session_id,
        int(created_at),
        int(length),
        lineage,
        title,
        preview,
        None if updated_at is None else int(updated_at),
    )


_SESSION_ROW = "FROM sessions WHERE id = %s AND deleted_at IS NULL"
_REMEMBERED = 4  # full reads kept for a second `inspect` (see `inspect`)


class PostgresBackend(Backend):
    """Session logs in a PostgreSQL database (see the module docstring)."""

    def __init__(self, settings: PostgresSettings, *, database: Database | None = None) -> None:
        self.settings = settings
        self.database = database or Database(settings)
        self._leases: PostgresLeases | None = None
        self._inbox: PostgresInbox | None = None
        self._remote_actions: PostgresRemoteActions | None = None
        self._feed: PostgresEventFeed | None = None
        # The latest full reads (a few; dropped when the Session's writer releases it).
        self._inspected: dict[str, tuple[LogMark, StoredSession]] = {}
        # Appends of several Sessions committed together (`rounds`); half the pool at
        # most, so reads, leases and the wake index keep connections of their own.
        self.rounds = Rounds(
            self._append_one,
            self._append_round,
            in_flight=max(1, settings.pool_size // 2),
        )

    def describe(self) -> str:
        return self.database.where

    # -- preparing and leases ---------------------------------------------------

    async def prepare(self) -> str:
        before, after = await self.database.prepare()
        schema = self.settings.schema_name
        if before == after:
            return f"schema {schema} of {self.database.where} is up to date (version {after})"
        return f"schema {schema} of {self.database.where} migrated from version {before} to {after}"

    @property
    def leases(self) -> PostgresLeases | None:
        """The leases a Host took from this backend (None until one did)."""
        return self._leases

    def lease_backend(
        self, owner: str, *, ttl: float = DEFAULT_LEASE_TTL_SECONDS
    ) -> PostgresLeases:
        if self._leases is None or (self._leases.owner, self._leases.ttl) != (owner, ttl):
            self._leases = PostgresLeases(self.database, owner, ttl=ttl)
        return self._leases

    def event_feed(self) -> PostgresEventFeed:
        """Wake-ups for events any host stored (one per backend)."""
        if self._feed is None:
            self._feed = PostgresEventFeed(self.database)
        return self._feed

    def inbox(self) -> PostgresInbox:
        """The inbox of the hosts on this database (one per backend)."""
        if self._inbox is None:
            self._inbox = PostgresInbox(self.database)
        return self._inbox

    def remote_actions(self) -> PostgresRemoteActions:
        """The remote actions of the hosts on this database (one per backend)."""
        if self._remote_actions is None:
            self._remote_actions = PostgresRemoteActions(self.database)
        return self._remote_actions

    async def summary(self, session_id: str) -> StoredSummary | None:
        row = await self._row(session_id, _SUMMARY_COLUMNS)
        return None if row is None else _summary(session_id, *row)

    def _fence(self, session_id: str) -> tuple[str | None, int | None]:
        """The (owner, epoch) a write of the Session is checked with: none for a backend
        no Host took leases from (a command, a test); else the lease it holds, and
        without one the write is refused before it is sent."""
        if self._leases is None:
            return None, None
        lease = self._leases.held(session_id)
        if lease is None:
            raise LeaseLost(
                f"session {session_id}: this host holds no lease on it in {self.describe()}"
            )
        return lease.owner, lease.epoch

    # -- writes -------------------------------------------------------------------

    async def initialize(self, header: SessionHeader, events: Sequence[SessionEvent]) -> None:
        validate_session_id(header.id)
        check_contiguous(header.id, events, 0)
        if events and await self.cursor(header.id) is not None:
            # A resume's writer asks to create what is stored: refuse before sending the
            # whole log (dsh_create checks again, atomically).
            raise SessionExists(f"session {header.id} is already stored in {self.describe()}")
        canonical = header.canonical()
        facts = SummaryFacts().add_all(events)
        lineage = canonical.lineage
        owner, epoch = self._fence(header.id)
        await self._write(
            header.id,
            "SELECT dsh_create(%s, %s, %s, %s, %s, %b, %b, %s, %s, %s, %s)",
            (
                header.id,
                canonical.to_json(),
                canonical.created_at,
                None if lineage is None else lineage.parent_id,
                None if lineage is None else lineage.forked_at,
                [event.type for event in events],
                [event.to_json() for event in events],
                shown(facts.title),
                shown(facts.preview),
                owner,
                epoch,
            ),
        )

    async def append(self, session_id: str, events: Sequence[SessionEvent]) -> None:
        validate_session_id(session_id)
        if not events:
            if await self.cursor(session_id) is None:
                raise SessionNotFound(f"session {session_id} is not stored in {self.describe()}")
            return
        start = events[0].seq
        check_contiguous(session_id, events, start)
        titles = [event for event in events if event.type == SESSION_TITLE]
        preview = SummaryFacts().add_all(events).preview
        owner, epoch = self._fence(session_id)
        pending = Append(
            session_id,
            start,
            [event.type for event in events],
            [event.to_json() for event in events],
            bool(titles),
            shown(title_of(titles[-1].data) if titles else None),
            shown(preview),
            owner,
            epoch,
        )
        await self.rounds.commit(pending)

    async def _write(
        self, session_id: str, statement: str, params: Sequence[Any], *, start: int | None = None
    ) -> None:
        async with self.database.connection() as connection:
            try:
                await connection.execute(statement, params, prepare=True)
            except psycopg.Error as error:
                raise self._refusal(session_id, error, start) or self.database.failure(
                    error, f"did not store session {session_id}"
                ) from error

    def _refusal(
        self, session_id: str, error: psycopg.Error, start: int | None
    ) -> StorageError | None:
        """The contract's exception for a refusal of `dsh_create`/`dsh_append`, or None."""
        message = error.diag.message_primary or str(error)
        return self._refused(
            session_id, error.sqlstate, message, start, isinstance(error, psycopg.DataError)
        )

    def _refused(
        self, session_id: str, state: str | None, message: str, start: int | None, data: bool
    ) -> StorageError | None:
        """`_refusal` from the SQLSTATE and message (`data`: psycopg refused a value)."""
        if state == ERRORS["cursor"]:
            return IntegrityError(session_id, int(message), start)
        if state == ERRORS["not_found"]:
            return SessionNotFound(f"session {session_id} is not stored in {self.describe()}")
        if state in (ERRORS["exists"], psycopg.errors.UniqueViolation.sqlstate):
            return SessionExists(f"session {session_id} is already stored in {self.describe()}")
        if state == ERRORS["lease_lost"]:
            return LeaseLost(message)
        if state == ERRORS["lease_held"]:
            owner = message.rpartition(" ")[2]
            return LeaseHeld(session_id, owner, None)
        if _value_refused(state, data):
            # A value a type refuses (psycopg's dumpers raise DataError before sending;
            # the server's data exceptions and program limits): the same batch fails
            # the same way every time, so the coordinator must not retry it.
            where = "its creation" if start is None else f"events from {start}"
            return StorageRefused(
                f"session {session_id}: {self.describe()} refused {where}: {message}"
            )
        return None

    # -- group commit (`rounds`) --------------------------------------------------

    async def _append_one(self, pending: Append) -> None:
        """One Session's append alone: `dsh_append`, its own statement and transaction."""
        await self._write(
            pending.session_id,
            "SELECT dsh_append(%s, %s, %b, %b, %s, %s, %s, %s, %s)",
            pending.arguments(),
            start=pending.start,
        )

    async def _append_round(self, round_: Sequence[Append]) -> bool:
        """Several Sessions' appends in one statement and one transaction
        (`dsh_append_round`); each one's refusal is set on it (`error`).

        Returns False if a value was refused, by psycopg before sending or by
        the server for the statement as a whole (nothing was stored: the
        caller writes each alone, so the refusal stays with its Session); raises
        the `StorageError` the round as a whole met (whether it committed is
        unknown).
        """
        arguments = (
            [item.session_id for item in round_],
            [item.start for item in round_],
            [len(item.types) for item in round_],
            [kind for item in round_ for kind in item.types],
            [body for item in round_ for body in item.bodies],
            [item.set_title for item in round_],
            [item.title for item in round_],
            [item.preview for item in round_],
            [item.owner for item in round_],
            [item.epoch for item in round_],
        )
        async with self.database.connection() as connection:
            try:
                cursor = await connection.execute(
                    "SELECT item, failed, reason FROM dsh_append_round(%s::text[],"
                    " %s::bigint[], %s::integer[], %b, %b, %s::boolean[], %s::text[],"
                    " %s::text[], %s::text[], %s::bigint[])",
                    arguments,
                    prepare=True,
                )
                rows = await cursor.fetchall()
            except psycopg.Error as error:
                if _value_refused(error.sqlstate, isinstance(error, psycopg.DataError)):
                    return False  # the round stored nothing: each is written alone
                raise self.database.failure(
                    error, f"did not store the appends of {len(round_)} sessions"
                ) from error
        for number, state, reason in rows:
            item = round_[number - 1]
            if state is not None:
                item.error = self._refused(
                    item.session_id, state, reason or "", item.start, False
                ) or StorageError(
                    f"PostgreSQL at {self.describe()} did not store session "
                    f"{item.session_id}: {reason} (SQLSTATE {state})"
                )
        return True

    # -- reads --------------------------------------------------------------------

    async def _row(self, session_id: str, columns: str) -> tuple[Any, ...] | None:
        validate_session_id(session_id)
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                f"SELECT {columns} {_SESSION_ROW}", (session_id,), prepare=True
            )
            return await cursor.fetchone()

    async def cursor(self, session_id: str) -> int | None:
        row = await self._row(session_id, "length")
        return None if row is None else int(row[0])

    async def mark(self, session_id: str) -> LogMark | None:
        row = await self._row(session_id, "length, log_id, incarnation")
        return None if row is None else LogMark(int(row[0]), (int(row[1]), int(row[2])))

    async def header(self, session_id: str) -> SessionHeader | None:
        row = await self._row(session_id, "header")
        return None if row is None else self._header(session_id, row[0])

    def _header(self, session_id: str, text: str) -> SessionHeader:
        try:
            return SessionHeader.from_json(text)
        except ValidationError as error:
            raise CorruptLog(self._where(session_id), 0, f"invalid header: {error}") from None

    def _where(self, session_id: str) -> str:
        return f"{self.describe()} session {session_id}"

    async def read(
        self,
        session_id: str,
        start: int = 0,
        stop: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> Events:
        validate_session_id(session_id)
        if start < 0:
            raise ValueError(f"read: start must be at least 0, not {start}")
        wanted = None if types is None else sorted(set(types))
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "SELECT s.log_id, e.seq, e.body FROM sessions s LEFT JOIN LATERAL ("
                " SELECT seq, body FROM events WHERE log_id = s.log_id"
                " AND seq >= %s AND (%s::bigint IS NULL OR seq < %s::bigint)"
                " AND (%s::text[] IS NULL OR type = ANY(%s::text[]))"
                " ORDER BY seq) e ON true"
                " WHERE s.id = %s AND s.deleted_at IS NULL ORDER BY e.seq",
                (start, stop, stop, wanted, wanted, session_id),
                prepare=True,
            )
            rows = await cursor.fetchall()
        if not rows:
            raise SessionNotFound(f"session {session_id} is not stored in {self.describe()}")
        return [self._event(session_id, seq, body) for _, seq, body in rows if seq is not None]

    def _event(self, session_id: str, seq: int, body: str) -> SessionEvent:
        try:
            event = SessionEvent.from_json(body)
        except ValidationError as error:
            raise CorruptLog(self._where(session_id), seq, f"invalid event: {error}") from None
        if event.seq != seq:
            raise CorruptLog(
                self._where(session_id), seq, f"the event stored as seq {seq} has seq {event.seq}"
            )
        return event

    async def inspect(self, session_id: str) -> StoredSession | None:
        validate_session_id(session_id)
        mark = await self.mark(session_id)
        if mark is None:
            return None
        remembered = self._inspected.get(session_id)
        if remembered is not None and remembered[0] == mark:
            # Stored events never change: the same log (incarnation) at the same length
            # is the same content, so a log read in full again (a cold read, then a
            # resume) costs one query.
            return remembered[1]
        stored = await self._inspect(session_id)
        if stored is not None and stored.mark == mark:
            self._inspected.pop(session_id, None)
            self._inspected[session_id] = (mark, stored)
            while len(self._inspected) > _REMEMBERED:
                del self._inspected[next(iter(self._inspected))]
        return stored

    async def _inspect(self, session_id: str) -> StoredSession | None:
        async with self.database.connection() as connection, connection.transaction():
            # One snapshot for the header and the events.
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await connection.execute(
                f"SELECT log_id, header, length, incarnation {_SESSION_ROW}",
                (session_id,),
                prepare=True,
            )
            row = await cursor.fetchone()
            if row is None:
                return None
            log_id, header, length, incarnation = row
            cursor = await connection.execute(
                "SELECT seq, body FROM events WHERE log_id = %s ORDER BY seq", (log_id,)
            )
            rows = await cursor.fetchall()
        events = tuple(self._event(session_id, seq, body) for seq, body in rows)
        # The same snapshot: the mark of exactly these events (`mark` reads the same row).
        mark = LogMark(int(length), (int(log_id), int(incarnation)))
        return StoredSession(self._header(session_id, header), events, False, mark)

    async def list(self) -> list[StoredSummary]:
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                f"SELECT id, {_SUMMARY_COLUMNS}"
                ' FROM sessions WHERE deleted_at IS NULL ORDER BY id COLLATE "C"',
                prepare=True,
            )
            rows = await cursor.fetchall()
        return [_summary(str(row[0]), *row[1:]) for row in rows]

    # -- the trash ----------------------------------------------------------------

    async def trash(self, session_id: str) -> None:
        validate_session_id(session_id)
        async with self.database.connection() as connection:
            try:
                cursor = await connection.execute(
                    "UPDATE sessions SET deleted_at = (extract(epoch FROM clock_timestamp())"
                    " * 1000)::bigint WHERE id = %s AND deleted_at IS NULL",
                    (session_id,),
                )
            except psycopg.errors.UniqueViolation:
                raise SessionExists(
                    f"the trash of {self.describe()} already holds a session {session_id}"
                ) from None
        if cursor.rowcount == 0:
            raise SessionNotFound(f"session {session_id} is not stored in {self.describe()}")

    async def restore(self, session_id: str) -> None:
        validate_session_id(session_id)
        async with self.database.connection() as connection:
            try:
                cursor = await connection.execute(
                    "UPDATE sessions SET deleted_at = NULL, incarnation = nextval('incarnations')"
                    " WHERE id = %s AND deleted_at IS NOT NULL",
                    (session_id,),
                )
            except psycopg.errors.UniqueViolation:
                raise SessionExists(
                    f"session {session_id} is already stored in {self.describe()}"
                ) from None
        if cursor.rowcount == 0:
            raise SessionNotFound(f"the trash of {self.describe()} holds no session {session_id}")

    async def trashed(self) -> SessionIds:
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                'SELECT id FROM sessions WHERE deleted_at IS NOT NULL ORDER BY id COLLATE "C"'
            )
            return [str(row[0]) for row in await cursor.fetchall()]

    async def inspect_trashed(self, session_id: str) -> StoredSession | None:
        validate_session_id(session_id)
        async with self.database.connection() as connection, connection.transaction():
            await connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            cursor = await connection.execute(
                "SELECT log_id, header FROM sessions WHERE id = %s AND deleted_at IS NOT NULL",
                (session_id,),
            )
            row = await cursor.fetchone()
            if row is None:
                return None
            log_id, header = row
            cursor = await connection.execute(
                "SELECT seq, body FROM events WHERE log_id = %s ORDER BY seq", (log_id,)
            )
            rows = await cursor.fetchall()
        events = tuple(self._event(session_id, seq, body) for seq, body in rows)
        return StoredSession(self._header(session_id, header), events, False, None)

    async def release(self, session_id: str) -> None:
        validate_session_id(session_id)
        self._inspected.pop(session_id, None)

    async def aclose(self) -> None:
        self._inspected.clear()
        await self.database.aclose()
