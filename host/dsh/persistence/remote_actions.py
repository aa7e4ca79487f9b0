"""Remote actions: a person's action posted on one host for a Session another host owns.

A plugin action (`POST /api/sessions/{id}/actions`, `dsh_session_action`)
answers only once its change is durable, so unlike a message it cannot be
dropped into an inbox and forgotten: the host it was posted to waits for
the owner's answer. A store shared by several hosts (PostgreSQL) gives its
Hosts `RemoteActions` (`Backend.remote_actions()`; a store only one process
writes has none):

- the poster stores a request (`request`), which wakes the hosts (the
  notification carries the Session id only: the rows are the truth);
- the owner claims the requests of its live Sessions one at a time, each
  just before it runs it (`take`: the oldest unanswered request of each
  Session, only while it holds a valid lease on the Session, each request
  once), runs it as a local action and stores the answer (`answer`), which
  wakes the poster; a request it took but cannot run here after all (the
  Session went cold meanwhile) it gives back untouched (`release`);
- the poster reads the answer (`outcome`), removes the request (`forget`)
  and answers the web client as the owner would have.

A request lasts as long as its poster waits for it (`expires_at`, on the
store's clock): an expired one is never taken, and `prune` removes what
no poster will read any more. A request runs at most once. One that no
host took while nobody holds its Session (the owner closed it, or died) is
withdrawn by its poster
(`withdraw` removes it only if still untaken), which then runs the action
itself; one that was taken by a host that lost the Session before answering
has an unknown outcome, and the poster says so rather than run it again.
`dsh.relay.actions.ActionRelay` is the host side of it.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Collection
from dataclasses import dataclass

from pydantic import JsonValue

__all__ = ["ActionAnswer", "ActionOutcome", "ActionRequest", "RemoteActions"]


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """One action waiting for the host that owns its Session."""

    id: int
    session_id: str
    plugin: str
    action: str
    args: dict[str, JsonValue]
    via: str  # the host it was posted to, which waits for the answer


@dataclass(frozen=True, slots=True)
class ActionAnswer:
    """What the owner answered: the action's `result`, or its refusal `error`
    (`{"code", "message"}`) with the HTTP `status` it stands for."""

    result: JsonValue = None
    error: dict[str, str] | None = None
    status: int = 200


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    """Where a request stands, as its poster sees it."""

    taken_by: str | None  # the host that claimed it, if any
    answer: ActionAnswer | None
    #: Nobody will answer: no valid lease holds its Session (untaken), or the host
    #: that took it no longer holds one (taken, unanswered).
    stranded: bool
    gone: bool = False  # the request is not stored (forgotten or never posted)


class RemoteActions(abc.ABC):
    """Actions on their way to the host that owns their Session (module docstring)."""

    #: How often a poster looks at its request, and an owner for untaken ones,
    #: when no notification came (a missed one is made up for this way).
    poll_seconds: float = 0.5

    @abc.abstractmethod
    async def request(
        self,
        session_id: str,
        plugin: str,
        action: str,
        args: dict[str, JsonValue],
        via: str,
        *,
        lasts: float,
    ) -> int:
        """Store the request durably, to be taken within `lasts` seconds, and wake the
        hosts; returns its id. Raises `StorageError`."""

    @abc.abstractmethod
    async def take(self, session_ids: Collection[str], taker: str) -> list[ActionRequest]:
        """Claim, for each of these Sessions that `taker` holds a valid lease on, its
        oldest unanswered request if nobody took it and it has not expired; each
        request is claimed by one host, once. A stored request that does not parse
        is answered with `storage_corrupt` instead of being returned."""

    @abc.abstractmethod
    async def waiting(self, taker: str) -> set[str]:
        """The Sessions `taker` holds a valid lease on that have a request to take."""

    @abc.abstractmethod
    async def release(self, request_id: int, taker: str) -> None:
        """Give back a request `taker` took and did not run (nor answer)."""

    @abc.abstractmethod
    async def answer(self, request_id: int, answer: ActionAnswer) -> None:
        """Store the answer of a claimed request and wake its poster."""

    @abc.abstractmethod
    async def outcome(self, request_id: int) -> ActionOutcome:
        """The request's state (`ActionOutcome`)."""

    @abc.abstractmethod
    async def withdraw(self, request_id: int) -> bool:
        """Remove the request if no host took it; whether it was removed."""

    @abc.abstractmethod
    async def forget(self, request_id: int) -> None:
        """Remove the request, whatever its state (its poster is done with it)."""

    @abc.abstractmethod
    async def prune(self, grace_seconds: float) -> int:
        """Remove the requests that expired more than `grace_seconds` ago (their posters
        stopped waiting, or died); how many."""

    @abc.abstractmethod
    async def listen(
        self, requested: Callable[[str], None], answered: Callable[[int], None]
    ) -> None:
        """Call `requested(session_id)` for every request posted and `answered(id)`
        for every answer stored (by any host), until cancelled. Reconnects after a
        failure. Never returns otherwise."""
