"""`pg`: the PostgreSQL store beside its limits, on a server of its own with fsync on.

The case starts a cluster with PostgreSQL's durable defaults (`initdb` +
`pg_ctl` in a temporary directory, unix socket; `tests/support/postgres.py`)
and measures, in one run:

- **append + flush** of one Session at batch 1 and batch 100 through the real
  stack (`LiveSessions.append` × batch, `await store.flush()`, the
  `PersistenceCoordinator`, `PostgresBackend` with its lease held, so every
  write is fenced), beside a raw loop on the same server: one `INSERT` of
  the same rows per batch, committed (autocommit), its texts sent as binary
  arrays like dsh's, no Python objects in between — the ceiling. Rounds
  interleave the two;
- **resume** (`Host.resume`: lease, read and decode every event, append the
  end-seed) and a **cold page** (`Host.history_page`, the last 50 events)
  of Sessions of each history length (1k and 100k in the full profile);
- **takeover**: two `dsh web` processes on the database; the owner of a
  Session is SIGKILLed and the other asks to resume it until it may (200),
  measured from the kill; the lease TTL is the overlay's (10 s, the default,
  in the full profile). Target: ≤ TTL + 2 s.

- **message latency**: two `dsh web` on the database, a Session live on A;
  messages posted alternately to A (the owner) and to B (through the
  inbox: a row, a NOTIFY, A queues it), each timed from the POST until its
  `message/user` is stored, as read back from the database (B's history of
  a Session it does not own shows stored events only), the next one once
  its turn ended.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import psycopg
from tests.support.postgres import running_postgres
from tests.support.webhost import WebHost, wait_for

from dsh.host.catalogue import PageRequest
from dsh.host.heap import HeapPolicy
from dsh.host.host import Host
from dsh.models.absent import AbsentModel
from dsh.persistence import PersistenceCoordinator
from dsh.persistence.backends import choose_backend
from dsh.persistence.postgres import PostgresBackend
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions
from dsh.session.log import Session

from ..persistence_throughput import DATA, collected_as_in_dsh_web
from ..sizes import Size
from ..stats import summary

__all__ = ["pg"]

_TTL = {"full": 10.0, "quick": 3.0, "smoke": 2.0}
_TAKEOVER_ROUNDS = {"full": 5, "quick": 2, "smoke": 1}
_MESSAGE_ROUNDS = {"full": 20, "quick": 8, "smoke": 2}


def _backend(url: str) -> PostgresBackend:
    backend = choose_backend(url, Path("/nonexistent"), environ={}).open()
    assert isinstance(backend, PostgresBackend)
    return backend


def _event(seq: int) -> SessionEvent:
    return SessionEvent(seq=seq, type="message/user", time=1_767_225_600_000, data=DATA)


def _raw(url: str, batch: int, events: int) -> float:
    """The ceiling: the same rows, one INSERT per batch, each its own commit."""
    conninfo = url.rpartition("&schema=")[0]
    rows = [_event(seq) for seq in range(events)]
    with psycopg.connect(conninfo, autocommit=True) as connection:
        # A real (WAL-logged) table like dsh's `events`: a TEMP one skips the WAL,
        # hence the very fsync the comparison is about.
        connection.execute("DROP TABLE IF EXISTS raw_events")
        connection.execute(
            "CREATE TABLE raw_events"
            " (log_id bigint, seq bigint, type text, body text, PRIMARY KEY (log_id, seq))"
        )
        start = time.perf_counter()
        for offset in range(0, events, batch):
            chunk = rows[offset : offset + batch]
            connection.execute(
                "INSERT INTO raw_events SELECT 1, * FROM unnest(%s::bigint[], %b::text[],"
                " %b::text[])",
                ([e.seq for e in chunk], [e.type for e in chunk], [e.to_json() for e in chunk]),
                prepare=True,
            )
        elapsed = time.perf_counter() - start
    return events / elapsed


async def _stack(url: str, batch: int, events: int) -> float:
    with collected_as_in_dsh_web() as policy:
        return await _stack_under(url, batch, events, policy)


async def _stack_under(url: str, batch: int, events: int, policy: HeapPolicy) -> float:
    live = LiveSessions()
    backend = _backend(url)
    session = Session.new(f"bench-{time.monotonic_ns()}", cwd="/", created_at=0)
    await backend.lease_backend("bench").acquire(session.id)
    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(live, backend, group)
        live.open(session)
        coordinator.attach(session, seed_end=0)
        await live.flush(session)  # creating the Session is not what is measured
        policy.settle()  # as a host does once a Session is live
        start = time.perf_counter()
        for _ in range(events // batch):
            for _ in range(batch):
                live.append(session, "message/user", DATA)
            if not await live.flush(session):
                raise RuntimeError("flush did not acknowledge durability")
        elapsed = time.perf_counter() - start
        await coordinator.aclose()
    await backend.aclose()
    return events / elapsed


async def _long_session(url: str, length: int) -> str:
    backend = _backend(url)
    session_id = f"long-{length}"
    header = Session.new(session_id, cwd="/", created_at=0).header
    await backend.initialize(header, [])
    for offset in range(0, length, 5_000):
        await backend.append(
            session_id, [_event(s) for s in range(offset, min(length, offset + 5_000))]
        )
    await backend.aclose()
    return session_id


async def _reads(url: str, lengths: tuple[int, ...], rounds: int) -> dict[str, Any]:
    ids = {length: await _long_session(url, length) for length in lengths}
    result: dict[str, Any] = {}
    backend = _backend(url)
    async with Host(backend=backend, model=AbsentModel()) as host:
        for length, session_id in ids.items():
            pages: list[float] = []
            resumes: list[float] = []
            for _ in range(rounds):
                start = time.perf_counter()
                page = await host.catalogue.page(session_id, PageRequest(limit=50))
                pages.append((time.perf_counter() - start) * 1000)
                assert len(page.events) == 50
                start = time.perf_counter()
                await host.resume(session_id)
                resumes.append((time.perf_counter() - start) * 1000)
                await host.close_session(session_id)
            result[f"{length}"] = {
                "cold_page_ms": summary(pages, 2),
                "resume_ms": summary(resumes, 1),
            }
    await backend.aclose()
    return result


def _one_takeover(owner: WebHost, survivor: WebHost, ttl: float) -> float:
    """Seconds from the SIGKILL of a Session's owner until the survivor may resume it."""
    session_id = owner.create_session()
    owner.post(f"/api/sessions/{session_id}/messages", {"text": "hello"})
    wait_for(
        lambda: "turn/end" in [e["type"] for e in owner.all_events(session_id)["events"]],
        what="the owner's reply",
    )
    owner.kill()
    killed = time.monotonic()
    wait_for(
        lambda: survivor.post(f"/api/sessions/{session_id}/resume").status_code == 200,
        timeout=ttl + 30,
        interval=0.02,
        what="the takeover",
    )
    return time.monotonic() - killed


def _takeover(url: str, data_dir: Path, ttl: float, rounds: int) -> dict[str, Any]:
    overlay = data_dir / "overlay.toml"
    overlay.write_text(
        f"[store]\nlease_ttl_seconds = {ttl}\nlease_renew_seconds = {ttl / 3:.3f}\n",
        encoding="utf-8",
    )
    times: list[float] = []
    for round_ in range(rounds):
        hosts = [
            WebHost(
                data_dir=data_dir / f"r{round_}-{name}",
                overlay=overlay,
                model="demo",
                extra_args=["--store", url],
            )
            for name in ("a", "b")
        ]
        try:
            for web in hosts:
                web.boot()
            owner, survivor = hosts
            times.append(_one_takeover(owner, survivor, ttl))
        finally:
            for web in hosts:
                web.stop()
    return {
        "ttl_s": ttl,
        "rounds": rounds,
        "takeover_s": summary(times, 2),
        "target_s": ttl + 2,
        "met": statistics.median(times) <= ttl + 2,
    }


def _one_message(post_to: WebHost, observer: WebHost, session_id: str, text: str) -> float:
    """Seconds from the POST until the message is stored (read through `observer`)."""
    start = time.monotonic()
    response = post_to.post(f"/api/sessions/{session_id}/messages", {"text": text})
    assert response.status_code == 202, response.text

    def stored() -> list[dict[str, Any]] | None:
        events = observer.all_events(session_id)["events"]
        found = [e for e in events if e["type"] == "message/user" and e["data"]["text"] == text]
        return events if found else None

    wait_for(stored, interval=0.002, what=f"{text!r} to be stored")
    took = time.monotonic() - start
    wait_for(
        lambda: observer.all_events(session_id)["events"][-1]["type"] == "turn/end" or None,
        what="its turn to end",
    )
    return took


def _messages(url: str, data_dir: Path, rounds: int) -> dict[str, Any]:
    hosts = [
        WebHost(data_dir=data_dir / name, model="demo", extra_args=["--store", url])
        for name in ("owner", "other")
    ]
    times: dict[str, list[float]] = {"owner": [], "non_owner": []}
    try:
        for web in hosts:
            web.boot()
        owner, other = hosts
        session_id = owner.create_session()
        for number in range(rounds):
            times["owner"].append(_one_message(owner, other, session_id, f"owner {number}"))
            times["non_owner"].append(_one_message(other, other, session_id, f"other {number}"))
    finally:
        for web in hosts:
            web.stop()
    owner_ms = summary([t * 1000 for t in times["owner"]], 1)
    other_ms = summary([t * 1000 for t in times["non_owner"]], 1)
    return {
        "rounds": rounds,
        "owner_ms": owner_ms,
        "non_owner_ms": other_ms,
        "ratio": round(float(other_ms["median"] or 0) / float(owner_ms["median"] or 1), 2),
    }


def pg(size: Size, data_dir: Path) -> dict[str, Any]:
    data_dir.mkdir(parents=True, exist_ok=True)
    with running_postgres(fsync=True) as server:
        url = f"{server.url}&schema=bench"
        anyio.run(_backend(url).prepare)
        batches = {1: size.durability_events[0], 100: size.durability_events[1]}
        rates: dict[tuple[str, int], list[float]] = {}
        for _ in range(size.durability_rounds):
            for batch, events in batches.items():
                rates.setdefault(("raw", batch), []).append(_raw(url, batch, events))
                rates.setdefault(("dsh", batch), []).append(anyio.run(_stack, url, batch, events))
        result: dict[str, Any] = {"rounds": size.durability_rounds, "fsync": True}
        for batch, events in batches.items():
            raw = summary(rates[("raw", batch)], 0)
            dsh = summary(rates[("dsh", batch)], 0)
            result[f"batch_{batch}"] = {
                "events_per_round": events,
                "raw_events_per_s": raw,
                "dsh_events_per_s": dsh,
                "ratio_to_raw": round(float(dsh["median"] or 0) / float(raw["median"] or 1), 3),
            }
        result["reads"] = anyio.run(_reads, url, size.history_lengths, max(3, size.resume_rounds))
        with tempfile.TemporaryDirectory(dir=data_dir) as scratch:
            result["takeover"] = _takeover(
                url, Path(scratch), _TTL[size.name], _TAKEOVER_ROUNDS[size.name]
            )
        with tempfile.TemporaryDirectory(dir=data_dir) as scratch:
            result["messages"] = _messages(url, Path(scratch), _MESSAGE_ROUNDS[size.name])
    return result
