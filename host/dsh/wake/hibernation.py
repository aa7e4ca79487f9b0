"""Hibernation: closing live Sessions nobody is using, so that live state stays bounded.

Every live Session holds its agent, its plugins' installations and its log's
index until it is closed (the JSONL backend bounds the log files it keeps
open on its own, `max_open_logs`). Without hibernation every Session that
ever went live stays live until the process exits. So a live Session is
closed through the normal path (`Host.close_session`: its agent disposed,
its last events flushed, its wake index entry written first) once it has had

- no running turn or maintenance, and no queued input (`Agent.phase` idle,
  `Agent.pending` 0),
- no watcher (a live WebSocket holds it: `hold`),
- every event confirmed by storage (a Session whose writes are failing keeps
  retrying them live),
- and no activity — an append, a flush, a watcher leaving, going live — for
  `idle_seconds`,

and its host agrees (`may_hibernate`: without the wake index, a Session
whose plugins report a wake time is never hibernated, so the note's
behaviour is unchanged; with it, one whose wake time has already come is
left to its owner).

One `WakeTimer` arms every live Session at its last activity plus
`idle_seconds`; activity only moves a number (the timer is re-armed lazily
when the old deadline comes up), and one task does the closing, one Session
at a time.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..agents.agent import AgentPhase
from ..base.clock import Clock
from ..base.scope import Disposer
from .timer import WakeTimer

if TYPE_CHECKING:
    from ..agents.agent import Agent

__all__ = ["Hibernator"]

log = logging.getLogger(__name__)


class Hibernator:
    """Closes idle live Sessions (see the module docstring)."""

    def __init__(
        self,
        *,
        idle_seconds: float,
        clock: Clock,
        agent: Callable[[str], Agent | None],
        may_hibernate: Callable[[Agent], bool],
        close: Callable[[str], Awaitable[None]],
    ) -> None:
        if not idle_seconds > 0:
            raise ValueError(f"idle_seconds must be positive, not {idle_seconds}")
        self.idle_ms = round(idle_seconds * 1000)
        self._clock = clock
        self._agent = agent
        self._may_hibernate = may_hibernate
        self._close = close
        self._last: dict[str, int] = {}
        self._holds: dict[str, int] = {}
        self._timer = WakeTimer(clock, self._on_due)
        self._due: tuple[MemoryObjectSendStream[str], MemoryObjectReceiveStream[str]] | None = None
        self._scope: anyio.CancelScope | None = None
        self.hibernated = 0

    # -- what the host tells it -------------------------------------------------

    def went_live(self, session_id: str) -> None:
        self._last[session_id] = self._clock.wall_ms()
        self._timer.arm(session_id, self._last[session_id] + self.idle_ms)

    def went_cold(self, session_id: str) -> None:
        self._last.pop(session_id, None)
        self._timer.disarm(session_id)

    def touch(self, session_id: str) -> None:
        """Something happened in the Session: its idle time starts again."""
        if session_id in self._last:
            self._last[session_id] = self._clock.wall_ms()

    def hold(self, session_id: str) -> Disposer:
        """Keep the Session from hibernating until the disposer is called (a watcher)."""
        self._holds[session_id] = self._holds.get(session_id, 0) + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            count = self._holds[session_id] - 1
            if count:
                self._holds[session_id] = count
            else:
                del self._holds[session_id]
            self.touch(session_id)

        return release

    def holds(self, session_id: str) -> int:
        return self._holds.get(session_id, 0)

    def deadline(self, session_id: str) -> int | None:
        """When the Session is next looked at (epoch ms), or None when it is not live."""
        return self._timer.at(session_id)

    # -- running ----------------------------------------------------------------

    def start(self, group: TaskGroup) -> None:
        self._scope = anyio.CancelScope()
        self._due = anyio.create_memory_object_stream[str](math.inf)
        group.start_soon(self._run, self._scope, name="hibernation")

    def stop(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def _run(self, scope: anyio.CancelScope) -> None:
        assert self._due is not None
        try:
            with scope:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._timer.run, name="hibernation timer")
                    group.start_soon(self._closer, name="hibernation closer")
        finally:
            for stream in self._due:
                stream.close()

    def _on_due(self, session_ids: list[str]) -> None:
        assert self._due is not None  # the timer runs only after `start`
        for session_id in session_ids:
            self._due[0].send_nowait(session_id)

    async def _closer(self) -> None:
        assert self._due is not None
        async for session_id in self._due[1]:
            if self._ready(session_id):
                try:
                    with anyio.CancelScope(shield=True):  # a close, once begun, completes
                        await self._close(session_id)
                    self.hibernated += 1
                except Exception as error:
                    log.error("hibernating session %s failed: %s", session_id, error)

    def _ready(self, session_id: str) -> bool:
        """True if the Session may be closed now; otherwise arms its next look."""
        last = self._last.get(session_id)
        agent = self._agent(session_id)
        if last is None or agent is None:
            self._last.pop(session_id, None)
            return False
        now = self._clock.wall_ms()
        if last + self.idle_ms > now:
            self._timer.arm(session_id, last + self.idle_ms)
            return False
        busy = agent.phase is not AgentPhase.IDLE or agent.pending > 0
        if busy or self.holds(session_id) or not self._may_hibernate(agent):
            self._timer.arm(session_id, now + self.idle_ms)
            return False
        return True
