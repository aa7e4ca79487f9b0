"""`PostgresRemoteActions`: remote actions as rows of the `remote_actions` table.

Each call is one statement. `request` inserts the row and notifies in the
same statement, so the wake-up is sent when (and only if) the row is
committed; so does `answer`. Both go out on the schema's `actions` channel
(`notify.channel`): `r <session id>` for a request, `a <request id>` for an
answer — one listening connection per host hears both.

`take` claims rows with `FOR UPDATE SKIP LOCKED` and only for Sessions the
taker holds a valid lease on (read in the same statement, on the database's
clock), so two hosts never claim one request, and a host that lost a
Session claims none of its requests; per Session only the oldest
unanswered request, so each is claimed just before it runs. `waiting`
finds the Sessions to take from without sending any ids (a join on the
taker's leases). `outcome` reads whether anybody can
still answer the same way: the lease of the Session (untaken) or of the
host that took it (taken).

Stored JSON (the arguments, the answer) is parsed and checked when read: a
request whose arguments do not parse is answered `storage_corrupt` (the
others claimed with it run), an answer that does not parse is a
`StorageError` naming its row.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from ...base.validation import describe
from ...session.ids import validate_session_id
from ..errors import StorageError
from ..remote_actions import ActionAnswer, ActionOutcome, ActionRequest, RemoteActions
from .notify import Listener, channel

if TYPE_CHECKING:
    from .database import Database

__all__ = ["PostgresRemoteActions"]

log = logging.getLogger(__name__)

_REQUEST = """
WITH posted AS (
    INSERT INTO remote_actions (session_id, plugin, action, args, via, expires_at)
    VALUES (%s, %s, %s, %s, %s, clock_timestamp() + make_interval(secs => %s))
    RETURNING id, session_id
)
SELECT id, pg_notify(%s, 'r ' || session_id) FROM posted
"""

# The oldest unanswered, unexpired request of each Session, if nobody took it yet:
# a Session's requests run one after another, each claimed just before it runs.
_TAKE = """
WITH claimable AS (
    SELECT r.id FROM remote_actions r
    WHERE r.session_id = ANY(%(ids)s::text[]) AND r.taken_by IS NULL
      AND r.expires_at > clock_timestamp()
      AND EXISTS (SELECT 1 FROM leases l WHERE l.session_id = r.session_id
                  AND l.owner = %(taker)s AND l.expires_at > clock_timestamp())
      AND NOT EXISTS (SELECT 1 FROM remote_actions o WHERE o.session_id = r.session_id
                      AND o.id < r.id AND o.answer IS NULL
                      AND o.expires_at > clock_timestamp())
    ORDER BY r.id
    FOR UPDATE OF r SKIP LOCKED
)
UPDATE remote_actions r SET taken_by = %(taker)s
FROM claimable WHERE r.id = claimable.id
RETURNING r.id, r.session_id, r.plugin, r.action, r.args, r.via
"""

_WAITING = """
SELECT DISTINCT r.session_id FROM remote_actions r
JOIN leases l ON l.session_id = r.session_id
WHERE r.taken_by IS NULL AND r.expires_at > clock_timestamp()
  AND l.owner = %s AND l.expires_at > clock_timestamp()
"""

_ANSWER = """
WITH answered AS (
    UPDATE remote_actions SET answer = %s, answered_at = clock_timestamp()
    WHERE id = %s AND answer IS NULL
    RETURNING id
)
SELECT pg_notify(%s, 'a ' || id) FROM answered
"""

_OUTCOME = """
SELECT r.taken_by, r.answer,
       NOT EXISTS (SELECT 1 FROM leases l WHERE l.session_id = r.session_id
                   AND (r.taken_by IS NULL OR l.owner = r.taken_by)
                   AND l.expires_at > clock_timestamp())
FROM remote_actions r WHERE r.id = %s
"""


class _StoredAnswer(BaseModel):
    """An answer as the owner stored it: `{"result"}` or `{"error", "status"}`."""

    model_config = ConfigDict(extra="forbid", strict=True)

    result: JsonValue = None
    error: dict[str, str] | None = None
    status: int = 200


def _encode(answer: ActionAnswer) -> str:
    if answer.error is None:
        return json.dumps({"result": answer.result}, allow_nan=False, separators=(",", ":"))
    return json.dumps({"error": answer.error, "status": answer.status}, separators=(",", ":"))


class PostgresRemoteActions(RemoteActions):
    """The remote actions of the hosts on one database (module docstring)."""

    def __init__(self, database: Database, *, poll_seconds: float = 0.5) -> None:
        self.database = database
        self.poll_seconds = poll_seconds
        self.channel = channel("actions", database.settings.schema_name)
        self._listener = Listener(database, self.channel, "remote actions")

    async def request(
        self,
        session_id: str,
        plugin: str,
        action: str,
        args: dict[str, JsonValue],
        via: str,
        *,
        lasts: float,
    ) -> int:
        validate_session_id(session_id)
        text = json.dumps(args, allow_nan=False, separators=(",", ":"))
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                _REQUEST, (session_id, plugin, action, text, via, lasts, self.channel)
            )
            row = await cursor.fetchone()
        assert row is not None  # an INSERT … RETURNING returns its row
        return int(row[0])

    async def take(self, session_ids: Collection[str], taker: str) -> list[ActionRequest]:
        if not session_ids:
            return []
        async with self.database.connection() as connection:
            cursor = await connection.execute(_TAKE, {"ids": sorted(session_ids), "taker": taker})
            rows = await cursor.fetchall()
        taken: list[ActionRequest] = []
        for row in rows:
            request = self._request(*row)
            if isinstance(request, ActionRequest):
                taken.append(request)
            else:
                await self.answer(row[0], request)
        return sorted(taken, key=lambda request: request.id)

    def _request(
        self, key: int, session_id: str, plugin: str, action: str, args: str, via: str
    ) -> ActionRequest | ActionAnswer:
        """The stored request, or the answer for one whose arguments do not parse."""
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            message = (
                f"PostgreSQL at {self.database.where}: remote action {key} holds arguments"
                " that are not a JSON object"
            )
            log.error("%s", message)
            return ActionAnswer(error={"code": "storage_corrupt", "message": message}, status=500)
        return ActionRequest(int(key), session_id, plugin, action, parsed, via)

    async def waiting(self, taker: str) -> set[str]:
        async with self.database.connection() as connection:
            cursor = await connection.execute(_WAITING, (taker,))
            return {str(row[0]) for row in await cursor.fetchall()}

    async def release(self, request_id: int, taker: str) -> None:
        async with self.database.connection() as connection:
            await connection.execute(
                "UPDATE remote_actions SET taken_by = NULL"
                " WHERE id = %s AND taken_by = %s AND answer IS NULL",
                (request_id, taker),
            )

    async def answer(self, request_id: int, answer: ActionAnswer) -> None:
        async with self.database.connection() as connection:
            await connection.execute(_ANSWER, (_encode(answer), request_id, self.channel))

    async def outcome(self, request_id: int) -> ActionOutcome:
        async with self.database.connection() as connection:
            cursor = await connection.execute(_OUTCOME, (request_id,))
            row = await cursor.fetchone()
        if row is None:
            return ActionOutcome(None, None, stranded=True, gone=True)
        taken_by, stored, unheld = row
        answer = None if stored is None else self._answer(request_id, stored)
        return ActionOutcome(taken_by, answer, stranded=answer is None and bool(unheld))

    def _answer(self, request_id: int, stored: str) -> ActionAnswer:
        try:
            parsed = _StoredAnswer.model_validate_json(stored)
        except ValidationError as error:
            raise StorageError(
                f"PostgreSQL at {self.database.where}: remote action {request_id} holds an"
                f" answer that is not one: {describe(error, root='answer')}"
            ) from None
        return ActionAnswer(parsed.result, parsed.error, parsed.status)

    async def withdraw(self, request_id: int) -> bool:
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "DELETE FROM remote_actions WHERE id = %s AND taken_by IS NULL", (request_id,)
            )
            return cursor.rowcount == 1

    async def forget(self, request_id: int) -> None:
        async with self.database.connection() as connection:
            await connection.execute("DELETE FROM remote_actions WHERE id = %s", (request_id,))

    async def prune(self, grace_seconds: float) -> int:
        async with self.database.connection() as connection:
            cursor = await connection.execute(
                "DELETE FROM remote_actions"
                " WHERE expires_at < clock_timestamp() - make_interval(secs => %s)",
                (grace_seconds,),
            )
            return cursor.rowcount

    async def listen(
        self, requested: Callable[[str], None], answered: Callable[[int], None]
    ) -> None:
        def woken(payload: str) -> None:
            kind, _, what = payload.partition(" ")
            if kind == "r":
                requested(what)
            elif kind == "a" and what.isdigit():
                answered(int(what))

        await self._listener.listen(woken)

    @property
    def listening(self) -> int:
        """Connections in LISTEN for remote actions now."""
        return self._listener.listening
