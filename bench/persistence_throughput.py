"""Durable append throughput for one Session, beside raw write + fdatasync.

    python bench/persistence_throughput.py [--dir DIR] [--rounds N]

Each `dsh` case appends events and flushes after every `batch` of them,
through the real `LiveSessions` + `PersistenceCoordinator` + `JsonlBackend`,
whose file work all runs in its one I/O worker thread (never on the event
loop), under the collection policy `dsh web` runs with
(`collected_as_in_dsh_web`): `dsh, 1 Session` flushes one Session; `dsh, 8
Sessions` flushes eight concurrently, so their batches are group-committed
(one trip to the worker for all that are waiting). `jsonl backend` calls
`JsonlBackend.append` directly with events built beforehand: the backend
alone, without the store's per-event validation. The raw cases write the
same JSON lines to a file in the same directory with one `write` +
`fdatasync` per batch and no Python objects in between, on the calling
thread: the limit everything is measured against.

Two more cases say how close any design could come while it keeps dsh's two
rules: `raw, off the loop` is the raw loop with each batch's write + fdatasync
handed to a worker thread (`anyio.to_thread`; dsh's stores hand theirs to a
thread too, so that the disk never runs on the event loop), and `checked
events` only builds the batch's events (`SessionEvent`: every event checked
and encoded, no I/O). A store must do both, and in this workload (append a
batch, then await its flush) one after the other, so `ceiling` (`ceiling()`)
is the rate of the two in sequence: the most a store that checks each event
and keeps the disk off the loop can reach here, whatever else it does.

Cases are interleaved over several rounds and the median is reported, because
fsync latency on shared disks drifts during a run.

Point `--dir` at the filesystem you care about: a tmpfs makes fsync free and
the numbers meaningless.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import anyio.to_thread
from pydantic import JsonValue

from dsh.host.heap import HeapPolicy
from dsh.persistence import JsonlBackend, PersistenceCoordinator
from dsh.session.event import SessionEvent
from dsh.session.live import LiveSessions
from dsh.session.log import Session

DATA: JsonValue = {"text": "hello world, this is a short user message", "source": {"kind": "user"}}
EVENTS = {1: 800, 100: 20_000}
CEILING_CASES = {"off_loop": "raw, off the loop", "checked": "checked events", "ceiling": "ceiling"}
_datasync: Callable[[int], None] = getattr(os, "fdatasync", os.fsync)


def line() -> bytes:
    event = SessionEvent(seq=1234, type="message/user", time=1_767_225_600_000, data=DATA)
    return event.to_json().encode() + b"\n"


def raw(directory: Path, batch: int, events: int) -> float:
    path = directory / f"raw-{batch}-{time.monotonic_ns()}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    payload = line() * batch
    try:
        start = time.perf_counter()
        for _ in range(events // batch):
            os.write(fd, payload)
            _datasync(fd)
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
        path.unlink()
    return events / elapsed


async def raw_off_loop(directory: Path, batch: int, events: int) -> float:
    """The raw loop with each batch's write + fdatasync run in one worker thread."""
    path = directory / f"raw-off-loop-{batch}-{time.monotonic_ns()}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    payload = line() * batch
    limiter = anyio.CapacityLimiter(1)

    def commit() -> None:
        os.write(fd, payload)
        _datasync(fd)

    try:
        start = time.perf_counter()
        for _ in range(events // batch):
            await anyio.to_thread.run_sync(commit, limiter=limiter)
        elapsed = time.perf_counter() - start
    finally:
        os.close(fd)
        path.unlink()
    return events / elapsed


def checked(events: int) -> float:
    """Events per second built from Python data (checked and encoded), nothing else."""
    start = time.perf_counter()
    for seq in range(events):
        SessionEvent(seq=seq, type="message/user", time=1_767_225_600_000, data=DATA)
    return events / (time.perf_counter() - start)


def ceiling(directory: Path, batch: int, events: int) -> dict[str, float]:
    """One round of the ceiling: `off_loop` and `checked` (events/s), and `ceiling`, the
    rate of the two in sequence."""
    off_loop = anyio.run(raw_off_loop, directory, batch, events)
    checking = checked(events)
    both = 1 / (1 / off_loop + 1 / checking)
    return {"off_loop": off_loop, "checked": checking, "ceiling": both}


async def backend_only(directory: Path, batch: int, events: int) -> float:
    backend = JsonlBackend(directory)
    session = Session.new(f"bench-{time.monotonic_ns()}", cwd=str(directory), created_at=0)
    await backend.initialize(session.header, [])
    built = [
        SessionEvent(seq=seq, type="message/user", time=1_767_225_600_000, data=DATA)
        for seq in range(events)
    ]
    start = time.perf_counter()
    for offset in range(0, events, batch):
        await backend.append(session.id, built[offset : offset + batch])
    elapsed = time.perf_counter() - start
    await backend.aclose()
    backend.path_of(session.id).unlink()
    return events / elapsed


@contextmanager
def collected_as_in_dsh_web() -> Iterator[HeapPolicy]:
    """The collection policy `dsh web` runs with (`HeapPolicy`), for one workload.

    A workload through `LiveSessions` keeps every event it appends, as a
    Session does; CPython's default collector would walk them all at each full
    collection (≈ 30 ms in two of seven rounds here), which the product never
    does. The bench's hosts run under the same policy. Afterwards the policy
    is removed and what it froze is unfrozen, so the next workload finds the
    collector as it was.
    """
    policy = HeapPolicy()
    policy.install()
    try:
        yield policy
    finally:
        policy.uninstall()
        gc.unfreeze()


async def stack(directory: Path, batch: int, events: int, sessions: int) -> float:
    """Events per second over `sessions` Sessions flushing concurrently (under
    `collected_as_in_dsh_web`)."""
    with collected_as_in_dsh_web() as policy:
        return await _stack(directory, batch, events, sessions, policy)


async def _stack(
    directory: Path, batch: int, events: int, sessions: int, policy: HeapPolicy
) -> float:
    live = LiveSessions()
    backend = JsonlBackend(directory)
    opened = [
        Session.new(f"bench-{time.monotonic_ns()}-{n}", cwd=str(directory), created_at=0)
        for n in range(sessions)
    ]
    per_session = events // sessions

    async def write(session: Session) -> None:
        for _ in range(per_session // batch):
            for _ in range(batch):
                live.append(session, "message/user", DATA)
            if not await live.flush(session):
                raise RuntimeError("flush did not acknowledge durability")

    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(live, backend, group)
        for session in opened:
            live.open(session)
            coordinator.attach(session, seed_end=0)
            await live.flush(session)  # creating the file is not what is measured
        policy.settle()  # as a host does once a Session is live
        start = time.perf_counter()
        async with anyio.create_task_group() as writers:
            for session in opened:
                writers.start_soon(write, session)
        elapsed = time.perf_counter() - start
        await coordinator.aclose()
    await backend.aclose()
    for session in opened:
        backend.path_of(session.id).unlink()
        backend.path_of(session.id).with_name(f".{session.id}.jsonl.idx").unlink(missing_ok=True)
    return per_session * sessions / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where to write (default: TMPDIR)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="dsh-bench-", dir=args.dir))
    cases: dict[tuple[str, int], list[float]] = {}
    try:
        for _ in range(args.rounds):
            for batch, events in EVENTS.items():
                cases.setdefault(("raw write+fdatasync", batch), []).append(
                    raw(directory, batch, events)
                )
                limits = ceiling(directory, batch, events)
                for key, name in CEILING_CASES.items():
                    cases.setdefault((name, batch), []).append(limits[key])
                cases.setdefault(("jsonl backend", batch), []).append(
                    anyio.run(backend_only, directory, batch, events)
                )
                for sessions, name in ((1, "dsh, 1 Session"), (8, "dsh, 8 Sessions")):
                    cases.setdefault((name, batch), []).append(
                        anyio.run(stack, directory, batch, events, sessions)
                    )
    finally:
        shutil.rmtree(directory)
    where = directory.parent
    print(f"median of {args.rounds} rounds, one Session, {len(line())}-byte events, in {where}")
    print(f"{'case':<22}{'batch':>6}{'events/s':>12}{'of raw':>8}")
    order = [
        "raw write+fdatasync",
        *CEILING_CASES.values(),
        "jsonl backend",
        "dsh, 1 Session",
        "dsh, 8 Sessions",
    ]
    for (name, batch), rates in sorted(
        cases.items(), key=lambda i: (i[0][1], order.index(i[0][0]))
    ):
        rate = statistics.median(rates)
        raw_rate = statistics.median(cases[("raw write+fdatasync", batch)])
        print(f"{name:<22}{batch:>6}{rate:>12,.0f}{rate / raw_rate:>8.0%}")


if __name__ == "__main__":
    main()
