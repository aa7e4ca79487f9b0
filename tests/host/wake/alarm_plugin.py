"""`alarm`: the smallest plugin that needs its Session live at a time (for the wake tests).

`alarm/set {"at": ms}` asks for the Session at `at`; `alarm/rang {"at": ms}`
records that it was delivered. `dsh_session_wake_at` answers the earliest
`at` not yet rung, from the log alone. Each root agent gets an owner task
that rings every due alarm (append + flush) and sleeps on the host clock
toward the next one, like the schedule plugin's owner, only simpler.
"""

from __future__ import annotations

import anyio

from dsh import Agent, SessionEvent, SessionLog, flush_barrier, hookimpl

SET = "alarm/set"
RANG = "alarm/rang"


def pending(log: SessionLog) -> list[int]:
    """The `at` of every alarm set and not rung, earliest first."""
    waiting: list[int] = []
    for event in log.scan(log.fold_start, types={SET, RANG}):
        at = event.data["at"] if isinstance(event.data, dict) else None
        if not isinstance(at, int):
            continue
        if event.type == SET:
            waiting.append(at)
        elif at in waiting:
            waiting.remove(at)
    return sorted(waiting)


def rung(log: SessionLog) -> list[int]:
    return [
        event.data["at"]
        for event in log.scan(types={RANG})
        if isinstance(event.data, dict) and isinstance(event.data.get("at"), int)
    ]


class AlarmPlugin:
    def __init__(self, context: object | None = None) -> None:
        self.published: list[str] = []
        self.fail_wake_at = False

    @hookimpl
    def dsh_session_wake_at(self, session: SessionLog) -> int | None:
        if self.fail_wake_at:
            raise RuntimeError("wake_at is broken on purpose")
        waiting = pending(session)
        return waiting[0] if waiting else None

    @hookimpl
    def dsh_event_view(self, session: SessionLog, event: SessionEvent) -> dict[str, int] | None:
        if event.type == RANG and isinstance(event.data, dict):
            return {"rang": event.data["at"]}
        return None

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        if not agent.is_root:
            return
        self.published.append(agent.session.id)
        agent.tasks.start_soon(self._own, agent, name=f"alarm owner {agent.session.id}")

    async def _own(self, agent: Agent) -> None:
        while not agent.closed:
            waiting = pending(agent.session)
            now = agent.clock.wall_ms()
            due = [at for at in waiting if at <= now]
            if due:
                for at in due:
                    agent.live.append(agent.session, RANG, {"at": at})
                await flush_barrier(agent.live, agent.session)
                continue
            if not waiting:
                await agent.when_idle()  # something may set an alarm meanwhile
                continue
            with anyio.move_on_after(60):
                await agent.clock.sleep((waiting[0] - now) / 1000)


def set_alarm(agent: Agent, at: int) -> None:
    agent.live.append(agent.session, SET, {"at": at})
