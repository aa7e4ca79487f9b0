"""`Rounds`: work for one Session at a time, run once more when asked again meanwhile.

Both relays are woken per Session (a notification, the Session going live,
a poll) and then read the store for it. Wake-ups come in bursts, so
`wake(session_id)` starts one run for a Session live on this host; a wake-up
that arrives while that run is going makes exactly one more run after it,
never a second one beside it. A run's `StorageError` is logged and left to
the next wake-up or poll.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from anyio.abc import TaskGroup
from pydantic import JsonValue

from ..agents.agent import Agent
from ..base.clock import Clock
from ..base.scope import Disposer
from ..persistence.errors import StorageError
from ..session.log import Session

__all__ = ["ActionRunner", "LifecycleEvents", "RelayHost", "Rounds"]


class LifecycleEvents(Protocol):
    def observe(self, observer: Callable[[Session, bool], None]) -> Disposer:
        """Hear `(session, live)` for every Session object that went live or cold."""


class ActionRunner(Protocol):
    async def run(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        """Run a person's action on a Session live here; its result, or its refusal."""


class RelayHost(Protocol):
    """What the relays need of their Host (a `dsh.host.host.Host` is one)."""

    @property
    def host_id(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def lifecycle(self) -> LifecycleEvents: ...

    def agent(self, session_id: str) -> Agent | None: ...

    def agents(self) -> list[Agent]: ...

    def owns(self, session_id: str) -> bool:
        """True while this host holds the Session's lease."""

    def durable_length(self, session: Session) -> int:
        """How many events of live `session` storage confirmed."""

    async def resume(self, session_id: str) -> tuple[Agent, bool]: ...

    @property
    def actions(self) -> ActionRunner: ...

log = logging.getLogger(__name__)


class Rounds:
    """Runs `work(session_id)` for Sessions live on `host` (see the module docstring)."""

    def __init__(self, host: RelayHost, work: Callable[[str], Awaitable[None]], what: str) -> None:
        self.host = host
        self.work = work
        self.what = what  # "inbox", "actions": names the tasks and the log lines
        self.group: TaskGroup | None = None  # set while the relay runs
        self.running: set[str] = set()
        self._again: set[str] = set()

    def wake(self, session_id: str) -> None:
        if self.host.agent(session_id) is None or self.group is None:
            return  # not live here: its owner, elsewhere, does it
        if session_id in self.running:
            self._again.add(session_id)  # once more after the running round
            return
        self.running.add(session_id)
        self.group.start_soon(self._loop, session_id, name=f"{self.what} {session_id}")

    async def _loop(self, session_id: str) -> None:
        try:
            while True:
                self._again.discard(session_id)
                try:
                    await self.work(session_id)
                except StorageError as error:
                    log.warning(
                        "%s: session %s: %s (taken at the next poll)", self.what, session_id, error
                    )
                if session_id not in self._again:
                    return
        finally:
            self.running.discard(session_id)
