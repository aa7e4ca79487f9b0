"""`InboxRelay`: messages posted on any host reach the host that owns their Session.

The host side of `dsh.persistence.inbox` (DESIGN §4, "any host answers the
whole API for any Session"), started by the Host when its store has an inbox:

- **Posting** (`post`): a message for a Session another host holds is stored
  as an inbox row, which wakes the owner; the poster answers 202 as for a
  local message.
- **Taking** (`_drain`): when a Session goes live here, when a wake-up names
  a Session live here, and when polling finds rows for one, its rows are
  read in order and each is queued (`Agent.submit`) as a local message
  would be, its source naming the row (`{"kind": "user", "inbox": id}`). A
  row whose message is already in the log — its previous owner stored it,
  then died before removing the row — is removed, not queued again.
- **Removing** (`_confirm`): a row is removed once the `message/user` it
  became is stored (durable), never before: a host that dies with messages
  queued leaves their rows to the next owner.
- **Orphans** (`_poll`): rows of a Session no host holds (its owner closed it
  or died) make this host try to make it live itself; the lease decides
  which host does. Rows of a Session that is no longer stored are removed.

So a message posted through any host is queued exactly once by an owner,
unless an owner dies after queuing it and before storing it — then the next
owner queues it (the log is what decides, as everywhere in dsh).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from ..agents.errors import AgentClosed
from ..persistence.errors import SessionNotFound, StorageError
from ..persistence.inbox import INBOX_SOURCE_KEY, Inbox
from ..session.errors import SessionLiveElsewhere
from ..session.log import Session
from ..session.types import USER_MESSAGE
from .rounds import RelayHost, Rounds

if TYPE_CHECKING:
    from ..agents.agent import Agent

__all__ = ["InboxRelay"]

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Taken:
    """What this host took from the inbox for one live Session object."""

    agent: Agent
    stored: set[int]  # rows whose message is in the log
    queued: set[int] = field(default_factory=set)  # submitted, not yet seen stored
    scanned: int = 0  # the log was searched for rows' messages up to here


def _inbox_id(data: object) -> int | None:
    source = data.get("source") if isinstance(data, dict) else None
    key = source.get(INBOX_SOURCE_KEY) if isinstance(source, dict) else None
    return key if isinstance(key, int) and not isinstance(key, bool) else None


class InboxRelay:
    """The Host's side of the inbox (see the module docstring)."""

    def __init__(self, host: RelayHost, inbox: Inbox) -> None:
        self.host = host
        self.inbox = inbox
        self.taken = 0  # messages queued from the inbox (all Sessions)
        self._state: dict[str, _Taken] = {}
        self._rounds = Rounds(host, self._drain, "inbox")
        self._scope = anyio.CancelScope()
        self._unobserve = host.lifecycle.observe(self._lifecycle)

    # -- with the Host ------------------------------------------------------------

    async def run(self) -> None:
        """Listen, poll and take until `stop` (in the Host's task group)."""
        with self._scope:
            async with anyio.create_task_group() as group:
                self._rounds.group = group
                group.start_soon(self.inbox.listen, self._woken, name="inbox listener")
                group.start_soon(self._poll_forever, name="inbox poll")

    def stop(self) -> None:
        self._unobserve()
        self._scope.cancel()

    # -- posting ------------------------------------------------------------------

    async def post(self, session_id: str, text: str, time_zone: str | None) -> int:
        """Store the message for the Session's owner (another host); returns its row id."""
        return await self.inbox.post(session_id, text, time_zone, via=self.host.host_id)

    # -- taking -------------------------------------------------------------------

    def _lifecycle(self, session: Session, live: bool) -> None:
        if not live:
            self._state.pop(session.id, None)  # its rows stay for the next owner
        elif self.host.agent(session.id) is not None:
            self._woken(session.id)

    def _woken(self, session_id: str) -> None:
        self._rounds.wake(session_id)

    async def _drain(self, session_id: str) -> None:
        agent = self.host.agent(session_id)
        if agent is None or not self.host.owns(session_id):
            return
        messages = await self.inbox.pending(session_id)
        if not messages:
            return
        taken = self._taken(session_id, agent)
        if taken is None:
            return
        # Only the stored log decides that a row is done with (never a queued message).
        self._search(taken, self.host.durable_length(agent.session))
        stored: list[int] = []
        for message in messages:
            if message.id in taken.stored:
                stored.append(message.id)
            elif message.id not in taken.queued:
                try:
                    agent.submit(
                        message.text,
                        {"kind": "user", INBOX_SOURCE_KEY: message.id},
                        time_zone=message.time_zone,
                    )
                except AgentClosed:
                    return  # closed meanwhile: the rows stay for the next owner
                taken.queued.add(message.id)
                self.taken += 1
        await self.inbox.remove(stored)

    def _taken(self, session_id: str, agent: Agent) -> _Taken | None:
        taken = self._state.get(session_id)
        if taken is None or taken.agent is not agent:
            if agent.closed:
                return None
            taken = self._state[session_id] = _Taken(agent, set())
        return taken

    def _search(self, taken: _Taken, stop: int) -> set[int]:
        """Add the rows whose messages are in `taken`'s log `[scanned, stop)`; the new ones."""
        found: set[int] = set()
        session = taken.agent.session
        for event in session.scan(taken.scanned, stop, types={USER_MESSAGE}):
            key = _inbox_id(event.data)
            if key is not None:
                found.add(key)
        taken.scanned = max(taken.scanned, stop)
        taken.stored |= found
        taken.queued -= found
        return found

    # -- polling --------------------------------------------------------------------

    async def _poll_forever(self) -> None:
        failing = False
        period = self.inbox.poll_seconds
        while True:
            await self.host.clock.sleep(period)
            try:
                await self._poll()
            except StorageError as error:
                if not failing:
                    log.warning(
                        "inbox: %s; polling again every %g s", error, self.inbox.poll_seconds
                    )
                failing = True
            else:
                failing = False

    async def _poll(self) -> None:
        await self._confirm()
        mine = [agent.session.id for agent in self.host.agents()]
        for session_id in sorted(await self.inbox.waiting(mine)):
            self._woken(session_id)  # a wake-up that did not arrive
        for session_id in await self.inbox.orphaned():
            if self.host.agent(session_id) is None:
                await self._adopt(session_id)

    async def _confirm(self) -> None:
        """Remove the rows whose messages are now stored."""
        done: list[int] = []
        for taken in list(self._state.values()):
            if taken.queued and not taken.agent.closed:
                durable = self.host.durable_length(taken.agent.session)
                done.extend(self._search(taken, durable))
        await self.inbox.remove(done)

    async def _adopt(self, session_id: str) -> None:
        """Rows nobody holds the Session for: make it live here (the lease decides)."""
        try:
            await self.host.resume(session_id)
        except SessionLiveElsewhere:
            return  # another host was quicker: it takes them
        except SessionNotFound:
            gone = await self.inbox.pending(session_id)
            log.warning(
                "inbox: session %s is not stored; dropping %d message(s) posted for it",
                session_id,
                len(gone),
            )
            await self.inbox.remove([message.id for message in gone])
        except Exception as error:
            log.warning(
                "inbox: cannot make session %s live to take its messages: %s", session_id, error
            )
