"""`ActionRelay`: a person's action posted on any host runs on the owner of its Session.

The host side of `dsh.persistence.remote_actions` (DESIGN §4, "any host
answers the whole API for any Session"), started by the Host when its store
has remote actions:

- **Asking** (`ask`): an action for a Session another host holds is stored
  as a request lasting `wait_seconds`, and this host waits for the owner's
  answer (woken by the answer's notification, or looking every
  `poll_seconds`), then answers with it: the owner's result, or its refusal
  with the same code and HTTP status a local refusal has (`refusal_of`).
  A store that fails meanwhile is looked at again until the wait ends. When
  nobody can answer an untaken request (the owner closed the Session or
  died), it is withdrawn and `ask` raises `Unclaimed`: the Host then makes
  the Session live itself and runs the action here. A request taken by a
  host that lost the Session before answering may have run; it is not run
  again (`ActionError` 503 `action_outcome_unknown`). No answer within
  `wait_seconds`: 504 (`action_not_taken` if nobody took it, which the
  request's expiry makes final; else `action_outcome_unknown`).
- **Running** (`_take_and_run`): when a request names a Session live here
  (its notification, the Session going live, the poll), this host claims
  the Session's oldest request, runs it as a local action
  (`SessionActions.run`) and stores the answer — shielded, and retried —
  then claims the next: one request at a time, each just before it runs. A
  request claimed for a Session that went cold here meanwhile is given
  back, untouched, rather than relayed on.

So an action runs at most once, on the host that owns the Session, under
the same lock and barriers as one posted there.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Final, TypeVar

import anyio
from pydantic import JsonValue

from ..base.errors import refusal_of
from ..persistence.errors import StorageError
from ..persistence.remote_actions import ActionAnswer, ActionRequest, RemoteActions
from ..plugins.errors import ActionError
from ..session.log import Session
from .errors import Unclaimed
from .rounds import RelayHost, Rounds

__all__ = ["ActionRelay", "Unclaimed"]

log = logging.getLogger(__name__)

#: How long a poster waits for the owner's answer (and its request lasts).
WAIT_SECONDS = 120.0
#: How long storing an answer, or forgetting a request, may take at most.
STORE_SECONDS = 10.0
#: How many times the owner tries to store an answer.
ANSWER_ATTEMPTS = 3
#: Expired requests are removed this long after they expired, every this many polls.
PRUNE_GRACE_SECONDS = 60.0
PRUNE_EVERY_POLLS = 60


_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class _Lost:
    taken_by: str  # took the request, then lost the Session before answering


_UNCLAIMED: Final = "unclaimed"
_Answer = ActionAnswer | _Lost | str


class ActionRelay:
    """The Host's side of remote actions (see the module docstring)."""

    def __init__(
        self, host: RelayHost, remote: RemoteActions, *, wait_seconds: float = WAIT_SECONDS
    ) -> None:
        self.host = host
        self.remote = remote
        self.wait_seconds = wait_seconds
        self.ran = 0  # requests of other hosts run here
        self._arrivals: dict[int, anyio.Event] = {}
        self._rounds = Rounds(host, self._take_and_run, "actions")
        self._scope = anyio.CancelScope()
        self._unobserve = host.lifecycle.observe(self._lifecycle)

    # -- with the Host ------------------------------------------------------------

    async def run(self) -> None:
        """Listen, poll and run until `stop` (in the Host's task group)."""
        with self._scope:
            async with anyio.create_task_group() as group:
                self._rounds.group = group
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
            session_id, plugin, action, args, via=self.host.host_id, lasts=self.wait_seconds
        )
        arrived = self._arrivals[request_id] = anyio.Event()
        try:
            answer = await self._within(self.wait_seconds, self._answer_of(request_id, arrived))
            if answer is None:
                answer = await self._expired(request_id, what)
        finally:
            self._arrivals.pop(request_id, None)
            with anyio.move_on_after(STORE_SECONDS, shield=True):
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
        """What `waiting` returns, or None once `seconds` passed on the host's clock.
        Its exception is raised as it is (not in an exception group)."""
        done: list[_T] = []
        failed: list[Exception] = []
        async with anyio.create_task_group() as group:

            async def expire() -> None:
                await self.host.clock.sleep(seconds)
                group.cancel_scope.cancel()

            group.start_soon(expire)
            try:
                done.append(await waiting)
            except Exception as error:
                failed.append(error)
            group.cancel_scope.cancel()
        if failed:
            raise failed[0]
        return done[0] if done else None

    async def _answer_of(self, request_id: int, arrived: anyio.Event) -> _Answer:
        """The owner's answer, the host that took the request and lost the Session,
        or `_UNCLAIMED` (withdrawn: nobody holds the Session). A failing store is
        looked at again at the next poll (the deadline still counts)."""
        failing = False
        while True:
            await self._within(self.remote.poll_seconds, arrived.wait())
            try:
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
            except StorageError as error:
                if not failing:
                    log.warning("remote action %d: %s; looking again", request_id, error)
                failing = True
            else:
                failing = False

    async def _expired(self, request_id: int, what: str) -> ActionAnswer:
        seconds = f"{self.wait_seconds:g} s"
        outcome = await self.remote.outcome(request_id)
        if outcome.answer is not None:
            return outcome.answer  # answered in the last moment
        if outcome.taken_by is None:
            # Expired with the wait: nobody takes it any more, even if it stays stored.
            raise ActionError(
                "action_not_taken",
                f"the host that holds the session did not take {what} within {seconds};"
                " it did not happen",
                status=504,
            )
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
            log.warning("remote action %d stays stored until it expires: %s", request_id, error)

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
        """Claim the Session's oldest request and run it, until none is left."""
        while self.host.agent(session_id) is not None:
            taken = await self.remote.take([session_id], self.host.host_id)
            if not taken:
                return
            for request in taken:
                await self._run(request)

    async def _run(self, request: ActionRequest) -> None:
        session_id = request.session_id
        what = f"action {request.action!r} of plugin {request.plugin!r} for host {request.via}"
        if self.host.agent(session_id) is None or not self.host.owns(session_id):
            # Went cold here since it was claimed: nothing ran; whoever holds the
            # Session next takes it (or its poster withdraws it).
            await self.remote.release(request.id, self.host.host_id)
            return
        try:
            result = await self.host.actions.run(
                session_id, request.plugin, request.action, request.args
            )
        except Exception as error:
            answer = self._refusal(error, what, session_id)
        else:
            answer = ActionAnswer(result)
        self.ran += 1
        with anyio.move_on_after(STORE_SECONDS, shield=True):
            await self._store_answer(request.id, answer, what)

    def _refusal(self, error: Exception, what: str, session_id: str) -> ActionAnswer:
        refusal = refusal_of(error)
        if refusal is None:
            log.error("actions: session %s: %s failed", session_id, what, exc_info=error)
            return ActionAnswer(
                error={
                    "code": "internal_error",
                    "message": f"{what} failed ({type(error).__name__}) on host"
                    f" {self.host.host_id}; see its server log",
                },
                status=500,
            )
        return ActionAnswer(
            error={"code": refusal.code, "message": refusal.message}, status=refusal.status
        )

    async def _store_answer(self, request_id: int, answer: ActionAnswer, what: str) -> None:
        for attempt in range(1, ANSWER_ATTEMPTS + 1):
            try:
                await self.remote.answer(request_id, answer)
                return
            except StorageError as error:
                if attempt == ANSWER_ATTEMPTS:
                    log.warning("actions: the answer to %s was not stored: %s", what, error)
                    return
                await self.host.clock.sleep(self.remote.poll_seconds * attempt)

    # -- polling ------------------------------------------------------------------

    async def _poll_forever(self) -> None:
        """Wake the Sessions live here that have requests whose wake-up did not
        arrive (one query, no ids sent), and now and then remove expired requests."""
        failing = False
        polls = 0
        while True:
            await self.host.clock.sleep(self.remote.poll_seconds)
            polls += 1
            try:
                for session_id in sorted(await self.remote.waiting(self.host.host_id)):
                    self._rounds.wake(session_id)
                if polls % PRUNE_EVERY_POLLS == 0:
                    await self.remote.prune(PRUNE_GRACE_SECONDS)
            except StorageError as error:
                if not failing:
                    log.warning(
                        "actions: %s; polling again every %g s", error, self.remote.poll_seconds
                    )
                failing = True
            else:
                failing = False
