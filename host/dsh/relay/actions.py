"""`ActionRelay`: a person's action posted on any host runs on the owner of its Session.

The host side of `dsh.persistence.remote_actions` (DESIGN §4, "any host
answers the whole API for any Session"), started by the Host when its store
has remote actions:

- **Asking** (`ask`): an action for a Session another host holds is stored
  as a request, and this host waits for the owner's answer (woken by the
  answer's notification, or looking every `poll_seconds`), then answers
  with it: the owner's result, or its refusal with the same code and HTTP
  status a local refusal has. When nobody can answer an untaken request
  (the owner closed the Session or died), it is withdrawn and `ask` raises
  `Unclaimed`: the Host then makes the Session live itself and runs the
  action here. A request taken by a host that lost the Session before
  answering may have run; it is not run again (`ActionError` 503
  `action_outcome_unknown`). No answer within `wait_seconds`: 504.
- **Running** (`_run`): when a request names a Session live here (its
  notification, the Session going live, the poll), this host claims it and
  runs it as a local action (`Host.session_action`), then stores the answer
  — a plugin's refusal as its code and status, any other failure as 503
  `action_failed` naming this host.

So an action runs at most once, on the host that owns the Session, under
the same lock and barriers as one posted there.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

import anyio
from anyio.abc import TaskGroup
from pydantic import JsonValue

from ..errors import ActionError, CodedError
from ..persistence.backend import StorageError
from ..persistence.remote_actions import ActionAnswer, ActionRequest, RemoteActions
from ..session import Session
from .rounds import Rounds

if TYPE_CHECKING:
    from ..host import Host

__all__ = ["ActionRelay", "Unclaimed"]

log = logging.getLogger(__name__)

#: How long a poster waits for the owner's answer.
WAIT_SECONDS = 120.0


_T = TypeVar("_T")


class Unclaimed(Exception):
    """No host took the request and no host holds its Session: run it here."""


@dataclass(frozen=True, slots=True)
class _Lost:
    taken_by: str  # took the request, then lost the Session before answering


_UNCLAIMED: Final = "unclaimed"
_Answer = ActionAnswer | _Lost | str


class ActionRelay:
    """The Host's side of remote actions (see the module docstring)."""

    def __init__(
        self, host: Host, remote: RemoteActions, *, wait_seconds: float = WAIT_SECONDS
    ) -> None:
        self.host = host
        self.remote = remote
        self.wait_seconds = wait_seconds
        self.ran = 0  # requests of other hosts run here
        self._arrivals: dict[int, anyio.Event] = {}
        self._rounds = Rounds(host, self._take_and_run, "actions")
        self._group: TaskGroup | None = None
        self._scope = anyio.CancelScope()
        self._unobserve = host.lifecycle.observe(self._lifecycle)

    # -- with the Host ------------------------------------------------------------

    async def run(self) -> None:
        """Listen, poll and run until `stop` (in the Host's task group)."""
        with self._scope:
            async with anyio.create_task_group() as group:
                self._group = self._rounds.group = group
                group.start_soon(
                    self.remote.listen, self._requested, self._arrived, name="actions listener"
                )
                group.start_soon(self._poll_forever, name="actions poll")

    def stop(self) -> None:
        self._unobserve()
        self._scope.cancel()

    # -- asking -------------------------------------------------------------------

    async def ask(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        """Run the action on the host that owns the Session; its result (module
        docstring). Raises the owner's refusal, `Unclaimed`, `ActionError` 503/504,
        or `StorageError`."""
        what = f"action {action!r} of plugin {plugin!r} on session {session_id}"
        request_id = await self.remote.request(
            session_id, plugin, action, args, via=self.host.host_id
        )
        arrived = self._arrivals[request_id] = anyio.Event()
        try:
            answer = await self._within(self.wait_seconds, self._answer_of(request_id, arrived))
            if answer is None:
                answer = await self._expired(request_id, what)
        finally:
            self._arrivals.pop(request_id, None)
            with anyio.CancelScope(shield=True):
                await self._forget(request_id)
        if answer is _UNCLAIMED:
            raise Unclaimed(what)
        if isinstance(answer, _Lost):
            raise ActionError(
                "action_outcome_unknown",
                f"host {answer.taken_by} took {what} but stopped holding the session before"
                " it answered; the action may or may not have happened: look at the session"
                " before trying again",
                status=503,
            )
        assert isinstance(answer, ActionAnswer)
        if answer.error is not None:
            raise ActionError(
                answer.error.get("code", "action_failed"),
                answer.error.get("message", f"{what} failed on the host that owns it"),
                status=answer.status,
            )
        return answer.result

    async def _within(self, seconds: float, waiting: Awaitable[_T]) -> _T | None:
        """What `waiting` returns, or None once `seconds` passed on the host's clock."""
        done: list[_T] = []
        async with anyio.create_task_group() as group:

            async def expire() -> None:
                await self.host.clock.sleep(seconds)
                group.cancel_scope.cancel()

            group.start_soon(expire)
            done.append(await waiting)
            group.cancel_scope.cancel()
        return done[0] if done else None

    async def _answer_of(self, request_id: int, arrived: anyio.Event) -> _Answer:
        """The owner's answer, the host that took the request and lost the Session,
        or `_UNCLAIMED` (withdrawn: nobody holds the Session)."""
        while True:
            await self._within(self.remote.poll_seconds, arrived.wait())
            outcome = await self.remote.outcome(request_id)
            if outcome.answer is not None:
                return outcome.answer
            if outcome.gone:
                return _UNCLAIMED  # removed under us: nothing ran it
            if outcome.stranded:
                if outcome.taken_by is not None:
                    return _Lost(outcome.taken_by)
                if await self.remote.withdraw(request_id):
                    return _UNCLAIMED
                # Taken just now: its answer is on the way.

    async def _expired(self, request_id: int, what: str) -> ActionAnswer:
        seconds = f"{self.wait_seconds:g} s"
        if await self.remote.withdraw(request_id):
            raise ActionError(
                "action_not_taken",
                f"the host that holds the session did not take {what} within {seconds};"
                " it did not happen",
                status=504,
            )
        outcome = await self.remote.outcome(request_id)
        if outcome.answer is not None:
            return outcome.answer  # answered in the last moment
        raise ActionError(
            "action_outcome_unknown",
            f"host {outcome.taken_by} took {what} but did not answer within {seconds};"
            " look at the session before trying again",
            status=504,
        )

    async def _forget(self, request_id: int) -> None:
        try:
            await self.remote.forget(request_id)
        except StorageError as error:
            log.warning("remote action %d stays stored: %s", request_id, error)

    def _arrived(self, request_id: int) -> None:
        arrived = self._arrivals.get(request_id)
        if arrived is not None:
            arrived.set()

    # -- running ------------------------------------------------------------------

    def _lifecycle(self, session: Session, live: bool) -> None:
        if live and self.host.agent(session.id) is not None:
            self._requested(session.id)

    def _requested(self, session_id: str) -> None:
        self._rounds.wake(session_id)

    async def _take_and_run(self, session_id: str) -> None:
        await self._run_all(await self.remote.take([session_id], self.host.host_id))

    async def _take(self, session_ids: list[str]) -> list[ActionRequest]:
        try:
            return await self.remote.take(session_ids, self.host.host_id)
        except StorageError as error:
            log.warning("actions: %s (taken at the next poll)", error)
            return []

    async def _run_all(self, requests: list[ActionRequest]) -> None:
        for request in requests:  # in order, as if posted here one after another
            await self._run(request)

    async def _run(self, request: ActionRequest) -> None:
        what = f"action {request.action!r} of plugin {request.plugin!r} for host {request.via}"
        try:
            result = await self.host.session_action(
                request.session_id, request.plugin, request.action, request.args
            )
        except CodedError as error:
            answer = ActionAnswer(
                error={"code": error.code, "message": error.message}, status=error.status
            )
        except Exception as error:
            log.warning("actions: session %s: %s failed: %s", request.session_id, what, error)
            answer = ActionAnswer(
                error={
                    "code": "action_failed",
                    "message": f"host {self.host.host_id} could not run {what}: {error}",
                },
                status=503,
            )
        else:
            answer = ActionAnswer(result)
        self.ran += 1
        try:
            await self.remote.answer(request.id, answer)
        except StorageError as error:
            log.warning("actions: the answer to %s was not stored: %s", what, error)

    # -- polling ------------------------------------------------------------------

    async def _poll_forever(self) -> None:
        """Claim, in one query, what was requested for any Session live here without
        a wake-up arriving; each Session's requests run in order."""
        while True:
            await self.host.clock.sleep(self.remote.poll_seconds)
            running = self._rounds.running
            idle = [a.session.id for a in self.host.agents() if a.session.id not in running]
            by_session: dict[str, list[ActionRequest]] = {}
            for request in await self._take(idle) if idle else []:
                by_session.setdefault(request.session_id, []).append(request)
            if self._group is not None:
                for session_id, requests in by_session.items():
                    self._group.start_soon(self._run_all, requests, name=f"actions {session_id}")
