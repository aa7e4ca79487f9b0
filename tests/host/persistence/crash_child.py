"""The child process of `test_crash.py`: append and flush until killed.

    python crash_child.py DATA_DIR SESSION_ID

Opens the Session (new, or resumed from DATA_DIR if stored) through the real
store + coordinator + JSONL backend, then loops: append a random number of
`test/tick` events (`{"pid", "n"}`, `n` counting from 0 in this process) and
flush; after every flush that returns True it prints the acknowledged
boundary (`len(session)`) on its own line.
"""

from __future__ import annotations

import os
import random
import sys

import anyio

from dsh.persistence import JsonlBackend, PersistenceCoordinator
from dsh.session.live import LiveSessions
from dsh.session.log import Session


async def main(data_dir: str, session_id: str) -> None:
    live = LiveSessions()
    rng = random.Random(os.getpid())
    async with anyio.create_task_group() as group:
        coordinator = PersistenceCoordinator(live, JsonlBackend(data_dir), group)
        stored = await coordinator.read(session_id)
        if stored is None:
            session = Session.new(session_id, cwd=data_dir, created_at=live.clock.wall_ms())
            seed_end = 0
        else:
            now = live.clock.wall_ms()
            session = Session.resume(stored.header, stored.events, resumed_at=now)
            seed_end = len(stored.events)
        live.open(session)
        coordinator.attach(session, seed_end=seed_end)
        count = 0
        while True:
            for _ in range(rng.randint(1, 30)):
                live.append(session, "test/tick", {"pid": os.getpid(), "n": count})
                count += 1
            if await live.flush(session):
                sys.stdout.write(f"{len(session)}\n")
                sys.stdout.flush()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
