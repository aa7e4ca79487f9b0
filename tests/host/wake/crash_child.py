"""The child process of `test_crash.py`: a Host with wake on, setting alarms until killed.

    python -m tests.host.wake.crash_child DATA_DIR SEED

A real Host (JSONL logs and wake index in DATA_DIR, the system clock, the
alarm plugin, hibernation after 0.3 s) does random work: new Sessions with
an alarm a moment ahead, alarms added to cold Sessions (resumed first) and
to live ones, explicit closes, while hibernation and the wake index close
and wake Sessions by themselves. After each alarm's flush is acknowledged it
prints `ACK <session> <at>`; a woken Session prints `LIVE <session>`.
"""

from __future__ import annotations

import random
import sys

import anyio

from dsh.host.host import Host
from dsh.persistence.jsonl import JsonlBackend
from dsh.testing import FakeModel
from dsh.wake import JsonlWakeBackend

from .alarm_plugin import AlarmPlugin, set_alarm


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Announcing(AlarmPlugin):
    def dsh_agent_published(self, agent):  # type: ignore[no-untyped-def]
        say(f"LIVE {agent.session.id}")
        super().dsh_agent_published(agent)


async def main(data_dir: str, seed: int) -> None:
    rng = random.Random(seed)
    host = Host(
        backend=JsonlBackend(data_dir),
        model=FakeModel(),
        wake_backend=JsonlWakeBackend(data_dir),
        idle_seconds=0.3,
    )
    host.pm.register(Announcing(), name="alarm")
    async with host:
        say("READY")  # the parent's kill timer starts here, not at the interpreter's start
        while True:
            choice = rng.random()
            if choice < 0.4 or (not host.agents() and choice < 0.7):
                agent = await host.create_session()
            elif choice < 0.7:
                rows = [row for row in await host.catalogue.list() if not row.live]
                if not rows:
                    continue
                agent, _ = await host.resume(rng.choice(rows).id)
            elif choice < 0.85 and host.agents():
                await host.close_session(rng.choice(host.agents()).session.id)
                continue
            else:
                agents = host.agents()
                if not agents:
                    continue
                agent = rng.choice(agents)
            at = host.clock.wall_ms() + rng.randint(100, 1500)
            try:
                set_alarm(agent, at)
                durable = await host.live.flush(agent.session)
            except Exception:
                continue  # hibernated under us: that alarm was never acknowledged
            if durable:
                say(f"ACK {agent.session.id} {at}")
            await anyio.sleep(rng.uniform(0.005, 0.08))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]))
