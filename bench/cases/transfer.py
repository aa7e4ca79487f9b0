"""`store-copy`: `dsh store copy` between a data dir and PostgreSQL, beside raw copies.

On a cluster of its own with fsync on (`tests/support/postgres.py`), N
Sessions of M events each (full: 1,000 × 100) are written into a data dir,
then copied by the real engine (`dsh.cli.transfer.copy.copy_store`, with
the stores' own wake and attention backends, as `dsh store copy` runs it):

- **JSONL → PostgreSQL**, beside the raw ceiling on the same server: each
  log file read and split into lines, and one INSERT + COMMIT of its rows
  (texts as binary arrays, like dsh's) — no checking, no read-back;
- **a second run** (everything already there: every log read on both sides
  and compared);
- **PostgreSQL → JSONL**, beside the raw ceiling on the same disk: each log's
  rows selected and written to a new file with one write and one fsync,
  then renamed into place (how dsh makes a new log).

Figures: Sessions/s and events/s of each, and the copy's share of the
ceiling. Rounds interleave dsh and the raw loops.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import psycopg
from tests.support.postgres import running_postgres

from dsh.attention.backends import attention_backend_for
from dsh.cli.transfer.copy import Side, copy_store
from dsh.persistence.backends import choose_backend
from dsh.persistence.jsonl import JsonlBackend
from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh.wake.backends import wake_backend_for

from ..persistence_throughput import DATA
from ..sizes import Size
from ..stats import summary

__all__ = ["store_copy"]

_SHAPE = {"full": (1_000, 100, 3), "quick": (200, 50, 2), "smoke": (10, 5, 1)}


class _Quiet:
    def start(self, what: str, total: int) -> None:
        return None

    def advance(self, events: int = 0) -> None:
        return None

    def finish(self) -> None:
        return None


async def _fill(directory: Path, sessions: int, events: int) -> None:
    backend = JsonlBackend(directory)
    for number in range(sessions):
        header = Session.new(f"bench-{number:05d}", cwd="/", created_at=0).header
        rows = [
            SessionEvent(seq=seq, type="message/user", time=1_767_225_600_000, data=DATA)
            for seq in range(events)
        ]
        await backend.initialize(header, rows)
    await backend.aclose()


async def _copy(source_url: str, target_url: str) -> float:
    sides = []
    for name, url in (("src", source_url), ("dst", target_url)):
        choice = choose_backend(url, Path("/nonexistent"), environ={})
        backend = choice.open()
        await backend.prepare()
        sides.append(
            Side(name, backend, wake_backend_for(choice, backend), attention_backend_for(backend))
        )
    start = time.perf_counter()
    await copy_store(sides[0], sides[1], _Quiet(), now_ms=int(time.time() * 1000))
    elapsed = time.perf_counter() - start
    for side in sides:
        await side.backend.aclose()
    return elapsed


def _raw_into_postgres(directory: Path, conninfo: str) -> float:
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS raw_copy")
        connection.execute(
            "CREATE TABLE raw_copy (log text, seq bigint, body text, PRIMARY KEY (log, seq))"
        )
        start = time.perf_counter()
        for path in sorted((directory / "sessions").glob("*.jsonl")):
            lines = path.read_bytes().split(b"\n")[1:-1]
            connection.execute(
                "INSERT INTO raw_copy SELECT %s, * FROM unnest(%s::bigint[], %b::text[])",
                (path.stem, list(range(len(lines))), [line.decode() for line in lines]),
                prepare=True,
            )
        return time.perf_counter() - start


def _raw_into_files(url: str, target: Path) -> float:
    conninfo, _, schema = url.rpartition("&schema=")
    (target / "sessions").mkdir(parents=True)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        start = time.perf_counter()
        ids = [row[0] for row in connection.execute("SELECT id, log_id FROM sessions")]
        for session_id in ids:
            rows = connection.execute(
                "SELECT e.body FROM events e JOIN sessions s USING (log_id)"
                " WHERE s.id = %s ORDER BY e.seq",
                (session_id,),
                prepare=True,
            ).fetchall()
            payload = b"{}\n" + b"".join(row[0].encode() + b"\n" for row in rows)
            temporary = target / "sessions" / f".{session_id}.tmp"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, payload)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(temporary, target / "sessions" / f"{session_id}.jsonl")
        directory_fd = os.open(target / "sessions", os.O_RDONLY)
        os.fsync(directory_fd)
        os.close(directory_fd)
        return time.perf_counter() - start


def store_copy(size: Size, data_dir: Path) -> dict[str, Any]:
    sessions, events, rounds = _SHAPE[size.name]
    total = sessions * events
    data_dir.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, list[float]] = {}
    with running_postgres(fsync=True) as server, tempfile.TemporaryDirectory(dir=data_dir) as tmp:
        scratch = Path(tmp)
        source = scratch / "source"
        anyio.run(_fill, source, sessions, events)
        for number in range(rounds):
            url = f"{server.url}&schema=copy{number}"
            seconds.setdefault("raw_into_pg", []).append(_raw_into_postgres(source, server.url))
            seconds.setdefault("jsonl_to_pg", []).append(anyio.run(_copy, f"jsonl:{source}", url))
            seconds.setdefault("again", []).append(anyio.run(_copy, f"jsonl:{source}", url))
            back = scratch / f"back-{number}"
            seconds.setdefault("pg_to_jsonl", []).append(anyio.run(_copy, url, f"jsonl:{back}"))
            raw_back = scratch / f"raw-{number}"
            seconds.setdefault("raw_into_files", []).append(_raw_into_files(url, raw_back))
            shutil.rmtree(back)
            shutil.rmtree(raw_back)

    def rates(key: str) -> dict[str, Any]:
        return {
            "seconds": summary(seconds[key], 3),
            "sessions_per_s": summary([sessions / s for s in seconds[key]], 0),
            "events_per_s": summary([total / s for s in seconds[key]], 0),
        }

    result: dict[str, Any] = {"sessions": sessions, "events_per_session": events}
    result["rounds"] = rounds
    for key in seconds:
        result[key] = rates(key)
    for copied, raw in (("jsonl_to_pg", "raw_into_pg"), ("pg_to_jsonl", "raw_into_files")):
        ours = result[copied]["events_per_s"]["median"] or 0
        ceiling = result[raw]["events_per_s"]["median"] or 1
        result[copied]["share_of_raw"] = round(ours / ceiling, 3)
    return result
