"""`SqliteSearchIndex`: the search index in SQLite FTS5 (`<data-dir>/search.sqlite`, or memory).

- `messages(rowid, session_id, seq, text, terms)` keeps each indexed
  message (UNIQUE (session_id, seq): rule 1 of `dsh.search.index`);
  `docs` is an FTS5 table over its `terms` (external content, BM25
  ranking); `indexed(session_id, through)` is rule 2.
- Terms are made by `dsh.search.terms` (CJK as character pairs), so the
  tokenizer only splits on spaces (`unicode61`, diacritics kept: folding
  is done already).
- A query ranks (BM25) only the newest `RANKED` messages it matches: a
  common word matches a third of a million messages, and scoring them all
  costs half a second; the newest are walked cheaply.
- It is a cache: WAL with `synchronous = NORMAL` (a power cut may lose the
  last writes, which the next start finds again from the logs), and a file
  SQLite cannot open, or of another version, is moved aside
  (`search.sqlite.broken-<time>`) and started empty.
- One connection, used by one call at a time from a worker thread (`anyio`),
  so the event loop never waits on the disk.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio

from ..persistence.errors import StorageError
from .index import Document, Hit, SearchIndex
from .terms import Query, fts_query, index_terms

__all__ = ["FILE_NAME", "RANKED", "SCHEMA_VERSION", "SqliteSearchIndex"]

log = logging.getLogger(__name__)

FILE_NAME = "search.sqlite"
SCHEMA_VERSION = 1
#: Of the messages a query matches, the newest this many are ranked (BM25).
RANKED = 2000
T = TypeVar("T")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS messages (
    rowid INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    terms TEXT NOT NULL,
    UNIQUE (session_id, seq)
);
CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
    terms, content='messages', content_rowid='rowid',
    tokenize='unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS indexed (session_id TEXT PRIMARY KEY, through INTEGER NOT NULL);
PRAGMA user_version = {SCHEMA_VERSION};
"""


class SqliteSearchIndex(SearchIndex):
    """The index in `directory/search.sqlite`, or in memory when `directory` is None."""

    def __init__(self, directory: Path | None) -> None:
        self.path = None if directory is None else Path(directory) / FILE_NAME
        self.description = "the search index in memory" if self.path is None else str(self.path)
        self.persistent = self.path is not None
        self._db: sqlite3.Connection | None = None
        self._lock = anyio.Lock()

    # -- opening ----------------------------------------------------------------

    async def open(self) -> None:
        async with self._lock:
            try:
                await anyio.to_thread.run_sync(self._open)
            except (sqlite3.Error, OSError) as error:
                raise StorageError(f"{self.description}: {error}") from error

    def _open(self) -> None:
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as error:
            assert self.path is not None  # memory cannot be broken
            aside = self.path.with_name(f"{FILE_NAME}.broken-{int(time.time())}")
            log.warning(
                "the search index %s cannot be used (%s); moved aside to %s and made again "
                "from the logs",
                self.path, error, aside.name,
            )  # fmt: skip
            for suffix in ("", "-wal", "-shm"):
                part = Path(f"{self.path}{suffix}")
                if part.exists():
                    part.replace(Path(f"{aside}{suffix}"))
            self._db = self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            ":memory:" if self.path is None else str(self.path),
            check_same_thread=False,
            isolation_level=None,
        )
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {version}, not {SCHEMA_VERSION}")
            if self.path is not None:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(_SCHEMA)
            db.execute("SELECT count(*) FROM indexed").fetchone()
        except sqlite3.DatabaseError:
            db.close()
            raise
        if self.path is not None:
            self.path.chmod(0o600)
        return db

    async def aclose(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            async with self._lock:
                db.close()

    # -- the interface ----------------------------------------------------------------

    async def through(self) -> dict[str, int]:
        query = "SELECT session_id, through FROM indexed"
        return await self._run(lambda db: dict(db.execute(query)))

    async def add(self, session_id: str, documents: Sequence[Document], through: int) -> None:
        rows = [(session_id, doc.seq, doc.text, index_terms(doc.text)) for doc in documents]

        def write(db: sqlite3.Connection) -> None:
            with _transaction(db):
                for row in rows:
                    cursor = db.execute(
                        "INSERT OR IGNORE INTO messages (session_id, seq, text, terms) "
                        "VALUES (?, ?, ?, ?)",
                        row,
                    )
                    if cursor.rowcount:
                        db.execute(
                            "INSERT INTO docs (rowid, terms) VALUES (?, ?)",
                            (cursor.lastrowid, row[3]),
                        )
                db.execute(
                    "INSERT INTO indexed (session_id, through) VALUES (?, ?) "
                    "ON CONFLICT (session_id) DO UPDATE "
                    "SET through = max(through, excluded.through)",
                    (session_id, through),
                )

        await self._run(write)

    async def forget(self, session_id: str) -> None:
        def drop(db: sqlite3.Connection) -> None:
            with _transaction(db):
                for rowid, terms in db.execute(
                    "SELECT rowid, terms FROM messages WHERE session_id = ?", (session_id,)
                ).fetchall():
                    db.execute(
                        "INSERT INTO docs (docs, rowid, terms) VALUES ('delete', ?, ?)",
                        (rowid, terms),
                    )
                db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                db.execute("DELETE FROM indexed WHERE session_id = ?", (session_id,))

        await self._run(drop)

    async def search(self, query: Query, limit: int) -> list[Hit]:
        if query.empty or limit <= 0:
            return []
        expression = fts_query(query)

        def find(db: sqlite3.Connection) -> list[Hit]:
            # Ranking every match of a common word costs a BM25 score per message;
            # only the newest RANKED matches are ranked (walking the match list
            # newest first is cheap), so a search stays fast at a million messages.
            floor = db.execute(
                "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (expression, RANKED - 1),
            ).fetchone()
            rows = db.execute(
                "SELECT m.session_id, m.seq, m.text, bm25(docs) AS rank "
                "FROM docs JOIN messages m ON m.rowid = docs.rowid "
                "WHERE docs MATCH ? AND docs.rowid >= ? ORDER BY rank LIMIT ?",
                (expression, 0 if floor is None else floor[0], limit),
            ).fetchall()
            return [Hit(*row) for row in rows]

        return await self._run(find)

    async def clear(self) -> None:
        def wipe(db: sqlite3.Connection) -> None:
            with _transaction(db):
                db.execute("DELETE FROM messages")
                db.execute("INSERT INTO docs (docs) VALUES ('delete-all')")
                db.execute("DELETE FROM indexed")

        await self._run(wipe)

    # -- running a call off the loop --------------------------------------------------

    async def _run(self, call: Callable[[sqlite3.Connection], T]) -> T:
        async with self._lock:
            db = self._db
            if db is None:
                raise StorageError(f"{self.description} is not open")
            try:
                return await anyio.to_thread.run_sync(call, db)
            except sqlite3.Error as error:
                raise StorageError(f"{self.description}: {error}") from error


class _transaction:
    """`BEGIN IMMEDIATE` … `COMMIT`, or `ROLLBACK` on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if kind is not None else "COMMIT")
