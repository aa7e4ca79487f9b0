"""`PostgresSearchIndex`: the search index in the database every host shares.

Two tables (migration 9): `search_messages` (one row per indexed message,
keyed by `(session_id, seq)`, with its text — NUL shown as U+FFFD, which a
`text` column cannot hold — and its terms as a `tsvector` behind a GIN
index) and `search_indexed` (per Session, how far it was indexed). Terms and
queries are made by `dsh.search.terms` and *cast* to `tsvector`/`tsquery`,
never parsed by PostgreSQL's text search parser, so Chinese is found
whatever the database's locale. Ranking is `ts_rank`. Each host indexes what
it stores (a row already there is kept: `ON CONFLICT DO NOTHING`), marks
only move forward (`greatest`), and a host that starts catches up what no
host indexed yet — so hosts racing on one Session agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..persistence.postgres.text import shown
from .index import Document, Hit, SearchIndex
from .terms import Query, index_terms, ts_query, ts_vector

if TYPE_CHECKING:
    from ..persistence.postgres.backend import PostgresBackend

__all__ = ["PostgresSearchIndex"]

_ADD = """
INSERT INTO search_messages (session_id, seq, text, terms)
SELECT session_id, seq, text, terms::tsvector
FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::text[]) AS item (session_id, seq, text, terms)
ON CONFLICT (session_id, seq) DO NOTHING
"""
_MARK = """
INSERT INTO search_indexed AS i (session_id, through) VALUES (%s, %s)
ON CONFLICT (session_id) DO UPDATE SET through = greatest(i.through, excluded.through)
"""
_FIND = """
SELECT session_id, seq, text, -ts_rank(terms, q) AS rank
FROM search_messages, CAST(%s AS tsquery) AS q
WHERE terms @@ q
ORDER BY rank, session_id, seq
LIMIT %s
"""


class PostgresSearchIndex(SearchIndex):
    """The index in `backend`'s database (see the module docstring)."""

    persistent = True

    def __init__(self, backend: PostgresBackend) -> None:
        self.database = backend.database
        self.description = f"the search tables in {backend.describe()}"

    async def through(self) -> dict[str, int]:
        async with self.database.connection() as connection:
            cursor = await connection.execute("SELECT session_id, through FROM search_indexed")
            return {str(row[0]): int(row[1]) for row in await cursor.fetchall()}

    async def add(self, session_id: str, documents: Sequence[Document], through: int) -> None:
        rows = [
            (session_id, doc.seq, shown(doc.text), ts_vector(index_terms(doc.text)))
            for doc in documents
        ]
        async with self.database.connection() as connection, connection.transaction():
            if rows:
                await connection.execute(_ADD, [list(column) for column in zip(*rows, strict=True)])
            await connection.execute(_MARK, (session_id, through))

    async def forget(self, session_id: str) -> None:
        async with self.database.connection() as connection, connection.transaction():
            await connection.execute(
                "DELETE FROM search_messages WHERE session_id = %s", (session_id,)
            )
            await connection.execute(
                "DELETE FROM search_indexed WHERE session_id = %s", (session_id,)
            )

    async def search(self, query: Query, limit: int) -> list[Hit]:
        if query.empty or limit <= 0:
            return []
        async with self.database.connection() as connection:
            cursor = await connection.execute(_FIND, (ts_query(query), limit))
            rows = await cursor.fetchall()
        return [Hit(str(s), int(seq), str(text), float(rank)) for s, seq, text, rank in rows]

    async def clear(self) -> None:
        async with self.database.connection() as connection, connection.transaction():
            await connection.execute("DELETE FROM search_messages")
            await connection.execute("DELETE FROM search_indexed")
