"""`storm-pg`: the 9 o'clock storm (issue 36, item 6) with the store on PostgreSQL.

The `storm` case's setup on a PostgreSQL server of its own with fsync on
(`tests/support/postgres.py`, `fsync=True`): N cold Sessions, one reminder
each, all due at one instant, their wake entries in the shared `wake`
table, nobody touching anything. Each storm runs in a schema of its own on
the same server, twice in one run:

- **two hosts** on the database, each a `Host` in a process of its own
  (what `dsh web --store postgresql://… --overlay overlays/web-schedule-wake`
  builds: `PostgresBackend`, `PostgresWakeBackend` on its pool, hibernation
  after 2 s, `HeapPolicy`), both reading the same wake table and claiming
  each Session before waking it;
- **one host**, the same storm alone (the same child process code).

Two processes, not two `Host`s in one: two hosts on one loop would share one
core and one GIL, so a second host could only add its overhead and never
its capacity, which is not what two hosts in production are. Two processes
on this machine share its two cores with the server (and its WAL writer),
which is the honest limit the ratio is read against.

Each host observes its own live Sessions (`DispatchProbe`) and writes its
tracks when told to stop; the parent merges them (`merge_tracks`): lateness
of each durable dispatch and follow-up, which host dispatched how many.
Missing and duplicated are read back from the stored logs (`stored_dispatches`).
Beside them, in the same run on the same database: **N × (INSERT + COMMIT)**
of one row each in separate transactions, one after another on one
connection — the PostgreSQL analogue of N × fsync (each commit waits for its
WAL flush) — and, during each storm, the server's own counters
(`pg_stat_database.xact_commit`, `pg_stat_wal.wal_sync`): how many
transactions committed and how many WAL flushes they cost, per Session,
from the hosts' start to their exit (their shutdown included: the server
reports a connection's counters when it closes, at the latest).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import asdict
from pathlib import Path
from typing import Any

import anyio
import psycopg
from prometheus_client import Histogram
from tests.support.postgres import running_postgres
from tests.support.webhost import REPO

from dsh.host.heap import HeapPolicy
from dsh.host.host import Host
from dsh.persistence.backends import choose_backend
from dsh.persistence.postgres import PostgresBackend
from dsh.session.event import SessionEvent
from dsh.session.live import Observation
from dsh.session.log import Session
from dsh.wake import WakeEntry
from dsh.wake.postgres import PostgresWakeBackend

from ..sizes import Size
from ..stats import summary
from ..support import SCHEDULE, DispatchProbe, FastModel, create_data, resume_all
from .wake import HIBERNATE_AFTER, _raise_descriptor_limit, rss_mb

__all__ = ["logged", "merge_tracks", "stored_dispatches", "storm_pg"]

_STATUS_EVERY = 0.1  # how often a host writes how many of its Sessions are complete


def _backend(url: str) -> PostgresBackend:
    backend = choose_backend(url, Path("/nonexistent"), environ={}).open()
    assert isinstance(backend, PostgresBackend)
    return backend


def _conninfo(url: str) -> str:
    """The libpq URL without dsh's `&schema=…` (the bench appends it last)."""
    return url.rpartition("&schema=")[0]


# -- setup --------------------------------------------------------------------------


async def _create(url: str, ids: Iterable[str], due_ms: int, now_ms: int) -> float:
    """Store one Session per id holding one reminder due at `due_ms`, and its wake entry
    (what the previous life leaves); returns the seconds the Sessions took to store.

    Setup, not measured: every Session is created by the schema's own `dsh_create`
    (unfenced, as a command's backend writes), all in one transaction, so that the
    storm's margin does not have to cover N separate commits first.
    """
    backend = _backend(url)
    await backend.prepare()
    ids = list(ids)
    event = SessionEvent(
        seq=0, type="schedule/change", time=now_ms, data=create_data(1, due_ms, now_ms)
    )
    body = event.to_json()
    headers = {
        sid: Session.new(sid, cwd="/", created_at=now_ms).header.canonical().to_json()
        for sid in ids
    }
    started = time.perf_counter()
    schema = url.rpartition("&schema=")[2]
    async with await psycopg.AsyncConnection.connect(_conninfo(url)) as connection:
        await connection.execute(f"SET search_path TO {schema}")
        async with connection.cursor() as cursor:
            await cursor.executemany(
                "SELECT dsh_create(%s, %s, %s, NULL, NULL, %s, %s, NULL, NULL, NULL, NULL)",
                [
                    (
                        session_id,
                        headers[session_id],
                        now_ms,
                        [event.type],
                        [body],
                    )
                    for session_id in ids
                ],
            )
    seconds = time.perf_counter() - started
    await PostgresWakeBackend(backend).replace({sid: WakeEntry(due_ms) for sid in ids})
    await backend.aclose()
    return seconds


async def _calibrate(url: str, count: int) -> dict[str, float]:
    """Seconds one Session takes to store, and one resume through a Host, here now."""
    ids = [f"calibrate{index:04d}" for index in range(count)]
    now_ms = time.time_ns() // 1_000_000
    stored = await _create(url, ids, now_ms + 86_400_000, now_ms)
    backend = _backend(url)
    async with Host(backend=backend, model=FastModel(), plugins=(SCHEDULE,), cwd="/") as host:
        resumed = await resume_all(host, ids)
    await backend.aclose()
    return {"store_s": stored / count, "resume_s": resumed / count}


def _commits_ms(url: str, count: int) -> dict[str, Any]:
    """N × (INSERT + COMMIT) of one small row, each its own transaction, one after another
    on one connection: the server's bound for N separately durable dispatches."""
    line = json.dumps({"seq": 1, "type": "schedule/change", "data": {"id": "rem-1"}})
    samples: list[float] = []
    with psycopg.connect(_conninfo(url), autocommit=True) as connection:
        connection.execute("DROP TABLE IF EXISTS bound_rows")
        connection.execute("CREATE TABLE bound_rows (id bigint PRIMARY KEY, body text)")
        connection.execute("CHECKPOINT")  # the setup's WAL must not land inside the probe
        for number in range(count):
            start = time.perf_counter()
            connection.execute(
                "INSERT INTO bound_rows VALUES (%s, %s)", (number, line), prepare=True
            )
            samples.append((time.perf_counter() - start) * 1000)
        connection.execute("DROP TABLE bound_rows")
    figures: dict[str, Any] = summary(samples, 4)
    figures["total_ms"] = round(sum(samples), 3)
    return figures


def _server_counters(url: str) -> dict[str, int]:
    """Transactions committed in the database and WAL flushes of the server, so far."""
    with psycopg.connect(_conninfo(url), autocommit=True) as connection:
        commits = connection.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        wal = connection.execute("SELECT wal_sync, wal_write FROM pg_stat_wal").fetchone()
    assert commits is not None and wal is not None
    return {"commits": int(commits[0]), "wal_syncs": int(wal[0]), "wal_writes": int(wal[1])}


# -- reading back ---------------------------------------------------------------------


def stored_dispatches(rows: Iterable[tuple[str, str | None]]) -> dict[str, int]:
    """Stored `schedule/change` dispatches per Session from `(session id, event body)`
    rows (`None`: a Session without such an event), every Session counted."""
    counts: dict[str, int] = {}
    for session_id, body in rows:
        count = counts.setdefault(session_id, 0)
        if body is not None:
            data = json.loads(body).get("data") or {}
            counts[session_id] = count + (data.get("change") == "dispatch")
    return counts


def _read_back(url: str) -> dict[str, int]:
    schema = url.rpartition("&schema=")[2]
    with psycopg.connect(_conninfo(url), autocommit=True) as connection:
        rows = connection.execute(
            f"SELECT s.id, e.body FROM {schema}.sessions s LEFT JOIN {schema}.events e"
            " ON e.log_id = s.log_id AND e.type = 'schedule/change' AND e.seq > 0"
            " WHERE s.deleted_at IS NULL"
        ).fetchall()
    return stored_dispatches((str(sid), body) for sid, body in rows)


def merge_tracks(
    hosts: Mapping[str, Mapping[str, Mapping[str, int | None]]],
    expected: Iterable[str],
) -> dict[str, Any]:
    """One storm's figures from each host's probe tracks (host → Session → track) of
    the `expected` Sessions (a host reports only the Sessions it dispatched).

    A Session's track on a host counts there once that host made its dispatch
    durable; the earliest such track is the Session's. Returns the lateness
    lists in ms (`durable`, `followup`), how many dispatches each host made
    durable (`by_host`), the Sessions some host made durable more than once
    across hosts (`dispatched_twice`, from the probes; the stored logs are
    the authority) and the Sessions no host completed (`missing`).
    """
    best: dict[str, Mapping[str, int | None]] = {}
    durable_on: dict[str, int] = {}
    by_host: dict[str, int] = {}
    for host, tracks in hosts.items():
        by_host[host] = 0
        for session_id, track in tracks.items():
            durable = track.get("durable_ns")
            if durable is None:
                continue
            by_host[host] += 1
            durable_on[session_id] = durable_on.get(session_id, 0) + 1
            known = best.get(session_id)
            if known is None or durable < (known.get("durable_ns") or 0):
                best[session_id] = track
    late: dict[str, list[float]] = {"durable": [], "followup": []}
    missing = 0
    for session_id in sorted(set(expected)):
        chosen = best.get(session_id)
        if chosen is None or chosen.get("followup_ns") is None:
            missing += 1
        if chosen is None:
            continue
        due = chosen["due_ns"] or 0
        for which in late:
            stamp = chosen.get(f"{which}_ns")
            if stamp is not None:
                late[which].append((stamp - due) / 1e6)
    return {
        "durable": late["durable"],
        "followup": late["followup"],
        "by_host": by_host,
        "dispatched_twice": sum(1 for count in durable_on.values() if count > 1),
        "missing": missing,
    }


# -- one storm ----------------------------------------------------------------------


def _spawn(url: str, due_ms: int, ids_file: Path, work: Path, name: str) -> subprocess.Popen[str]:
    """A storm host in a process of its own; its stderr goes to `work/<name>.stderr`."""
    with (work / f"{name}.stderr").open("w", encoding="utf-8") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "bench.cases.storm_pg", url, str(due_ms), str(ids_file),
             str(work), name],
            cwd=REPO,
            text=True,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )  # fmt: skip


# What psycopg's pool says when a host closes with queries outstanding: not the storm's.
_SHUTDOWN_NOISE = ("query cancellation interrupted", "discarding closed connection")


def logged(path: Path) -> dict[str, Any]:
    """How many lines a host logged (its warnings and errors), and the first few kinds."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return {"lines": 0, "first": []}
    kept = [line for line in lines if line.strip() and not line.startswith(_SHUTDOWN_NOISE)]
    first: list[str] = []
    for line in kept:
        kind = line[:160]
        if kind not in first:
            first.append(kind)
    return {"lines": len(kept), "first": first[:5]}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _wait(what: str, check: Any, timeout: float, children: list[subprocess.Popen[str]]) -> bool:
    """Poll `check()` every 20 ms until it is true (True) or `timeout` s pass (False);
    a child that exits first is an error naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        for child in children:
            if child.poll() is not None:
                raise RuntimeError(f"a storm host exited ({child.returncode}) before {what}")
        time.sleep(0.02)
    return False


def _storm(
    url: str,
    work: Path,
    sessions: int,
    hosts: int,
    calibration: dict[str, float],
    start_seconds: float,
) -> dict[str, Any]:
    """One storm of `sessions` Sessions shared by `hosts` host processes, which are
    given `start_seconds` to start (two at once on two cores, with room)."""
    work.mkdir(parents=True, exist_ok=True)
    prefix = f"h{hosts}s"
    ids = [f"{prefix}{index:05d}" for index in range(sessions)]
    now_ms = time.time_ns() // 1_000_000
    # Room to store every Session, start every host (imports, the index) and then
    # let each wake the whole storm ahead as if alone (each plans at its own measured
    # rate, not knowing of the other): the storm is then the dispatches' own, and
    # both hosts are up before the first of them starts waking.
    margin_s = (
        calibration["store_s"] * sessions * 1.5
        + start_seconds
        + calibration["resume_s"] * sessions * 1.5
    )
    due_ms = now_ms + round(margin_s * 1000)
    stored_s = anyio.run(_create, url, ids, due_ms, now_ms)
    ids_file = work / "ids.json"
    ids_file.write_text(json.dumps(ids), encoding="utf-8")
    names = [f"host{number}" for number in range(1, hosts + 1)]
    children = [_spawn(url, due_ms, ids_file, work, name) for name in names]
    try:
        _wait(
            "it started",
            lambda: all((work / f"{name}.ready").exists() for name in names),
            120,
            children,
        )
        ready_ms = time.time_ns() // 1_000_000
        before = _server_counters(url)

        def complete() -> bool:
            counts = [(_read_json(work / f"{name}.status") or 0) for name in names]
            return sum(counts) >= sessions

        patience = max(0.0, (due_ms - time.time_ns() // 1_000_000) / 1000) + 60 + sessions * 0.01
        finished = _wait("the storm ended", complete, patience, children)
    finally:
        (work / "stop").touch()
        for child in children:
            try:
                child.wait(timeout=120)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    # After the hosts exited: a server process reports its counters when idle, at most
    # once a second, and surely when its connection closes.
    after = _server_counters(url)
    reports = {name: _read_json(work / f"{name}.json") or {} for name in names}
    merged = merge_tracks({name: report.get("tracks", {}) for name, report in reports.items()}, ids)
    stored = _read_back(url)
    durable = summary(merged["durable"])
    return {
        "hosts": hosts,
        "sessions": sessions,
        "finished": finished,
        "store_seconds": round(stored_s, 2),
        "ready_before_target_s": round((due_ms - ready_ms) / 1000, 2),
        "missing": merged["missing"],
        "stored_missing": sum(1 for sid in ids if stored.get(sid, 0) == 0),
        "duplicated": sum(1 for count in stored.values() if count > 1),
        "dispatched_twice_probe": merged["dispatched_twice"],
        "by_host": merged["by_host"],
        "woken_by_host": {name: report.get("woken") for name, report in reports.items()},
        "live_before_target_by_host": {
            name: report.get("live_before_target") for name, report in reports.items()
        },
        "warnings_by_host": {name: logged(work / f"{name}.stderr") for name in names},
        "appends_by_host": {name: report.get("appends") for name, report in reports.items()},
        "group_commit_by_host": {
            name: report.get("group_commit") for name, report in reports.items()
        },
        "durable_ms": durable,
        "followup_ms": summary(merged["followup"]),
        "peak_rss_mb": {name: report.get("peak_rss_mb") for name, report in reports.items()},
        "server": {key: after[key] - before[key] for key in ("commits", "wal_syncs", "wal_writes")},
    }


def _ratio(value: Any, bound: Any) -> float | None:
    return None if value is None or not bound else round(float(value) / float(bound), 2)


def storm_pg(size: Size, data_dir: Path) -> dict[str, Any]:
    """The storm on PostgreSQL: two hosts, one host, and N × commit on one server."""
    data_dir.mkdir(parents=True, exist_ok=True)
    sessions, start = size.storm_pg, size.storm_pg_start
    with running_postgres(fsync=True) as server:
        base = f"{server.url}&schema="
        calibration = anyio.run(_calibrate, base + "calibrate", 50)
        bound = _commits_ms(base + "calibrate", sessions)
        runs = {
            name: _storm(
                f"{base}storm{hosts}", data_dir / name, sessions, hosts, calibration, start
            )
            for name, hosts in (("one_host", 1), ("two_hosts", 2))
        }
    result: dict[str, Any] = {
        "sessions": sessions,
        "calibration_ms": {key: round(value * 1000, 3) for key, value in calibration.items()},
        "commits_ms": bound,
        "commit_bound_ms": bound["total_ms"],
        **runs,
    }
    for run in runs.values():
        run["durable_p99_to_bound"] = _ratio(run["durable_ms"]["p99"], bound["total_ms"])
        run["followup_p99_to_bound"] = _ratio(run["followup_ms"]["p99"], bound["total_ms"])
        durable = max(1, sum(run["by_host"].values()))
        run["server"]["commits_per_session"] = round(run["server"]["commits"] / durable, 2)
        run["server"]["wal_syncs_per_session"] = round(run["server"]["wal_syncs"] / durable, 3)
    one, two = runs["one_host"]["durable_ms"], runs["two_hosts"]["durable_ms"]
    # Not a `summary` (its keys say so): the ratio of each of two hosts' figures to one's.
    result["two_to_one"] = {
        name: _ratio(two[key], one[key])
        for name, key in (("p50", "median"), ("p99", "p99"), ("max", "max"))
    }
    return result


# -- a storm host (the child process) ---------------------------------------------


def _count(histogram: Histogram) -> int:
    """How many observations a Prometheus histogram holds."""
    return round(
        sum(
            sample.value
            for metric in histogram.collect()
            for sample in metric.samples
            if sample.name.endswith("_count")
        )
    )


async def _host(url: str, due_ms: int, ids: list[str], work: Path, name: str) -> None:
    """Serve the storm until `work/stop` exists; write `work/<name>.json` (the probe's
    tracks, how many Sessions this host woke, its peak RSS)."""
    _raise_descriptor_limit()
    backend = _backend(url)
    probe = DispatchProbe()
    for session_id in ids:
        probe.expect(session_id, due_ms)
    peak = rss_mb()
    host = Host(
        backend=backend,
        model=FastModel(),
        plugins=(SCHEDULE,),
        cwd=str(work),
        wake_backend=PostgresWakeBackend(backend),
        idle_seconds=HIBERNATE_AFTER,
        heap=HeapPolicy(),
    )
    status = work / f"{name}.status"
    async with AsyncExitStack() as stack:
        stack.push_async_callback(backend.aclose)  # the Host leaves its backend open
        await stack.enter_async_context(host)
        host.live.observe(probe)
        first_seen: dict[str, int] = {}  # when each Session was first seen live

        def seen(observation: Observation) -> None:
            first_seen.setdefault(observation.session.id, time.time_ns())

        host.live.observe(seen)
        (work / f"{name}.ready").touch()
        written = -1
        while not (work / "stop").exists():
            if probe.complete != written:
                written = probe.complete
                status.with_suffix(".tmp").write_text(str(written), encoding="utf-8")
                status.with_suffix(".tmp").replace(status)
            peak = max(peak, rss_mb())
            await anyio.sleep(_STATUS_EVERY)
        index = host.lifecycle.index
        woken = 0 if index is None else index.woken
        appends = _count(host.measures.append_seconds)
        rounds = getattr(backend, "rounds", None)  # None: a dsh before the group commit
        grouped = None if rounds is None else {"rounds": rounds.rounds, "grouped": rounds.grouped}
    tracks = {
        session_id: asdict(track)
        for session_id, track in probe.tracks.items()
        if track.dispatched_ns is not None
    }
    report = {
        "tracks": tracks,
        "live_before_target": sum(1 for ns in first_seen.values() if ns < due_ms * 1_000_000),
        "woken": woken,
        "appends": appends,
        "group_commit": grouped,
        "peak_rss_mb": peak,
    }
    (work / f"{name}.json").write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    _url, _due, _ids, _work, _name = sys.argv[1:6]
    anyio.run(
        _host,
        _url,
        int(_due),
        json.loads(Path(_ids).read_text(encoding="utf-8")),
        Path(_work),
        _name,
    )
