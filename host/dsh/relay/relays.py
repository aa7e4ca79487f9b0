"""`Relays.start`: the relays a store several hosts share asks for, running.

A store hands out what it shares (`Backend.inbox`, `remote_actions`,
`event_feed`); each one it has gets its relay, started in the Host's task
group. A store of one host (JSONL, memory) has none, and this is empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from anyio.abc import TaskGroup

from ..persistence.backend import Backend
from .actions import ActionRelay
from .follow import StoredFollowers
from .messages import InboxRelay
from .rounds import RelayHost

__all__ = ["Relays"]


@dataclass(frozen=True, slots=True)
class Relays:
    """The relays of one Host: each None when its store does not share that."""

    inbox: InboxRelay | None = None
    actions: ActionRelay | None = None
    followers: StoredFollowers | None = None

    @classmethod
    def start(cls, host: RelayHost, backend: Backend, group: TaskGroup) -> Relays:
        """Start, in `group`, a relay for each thing `backend` shares."""
        inbox = backend.inbox()
        relay = None if inbox is None else InboxRelay(host, inbox)
        remote_actions = backend.remote_actions()
        actions = None if remote_actions is None else ActionRelay(host, remote_actions)
        feed = backend.event_feed()
        followers = None if feed is None else StoredFollowers(feed)
        if relay is not None:
            group.start_soon(relay.run, name="inbox relay")
        if actions is not None:
            group.start_soon(actions.run, name="action relay")
        if followers is not None:
            group.start_soon(followers.run, name="stored events listener")
        return cls(relay, actions, followers)

    def stop(self) -> None:
        """Stop taking work: what is queued or asked stays stored for the next owner."""
        for relay in (self.inbox, self.actions):
            if relay is not None:
                relay.stop()
