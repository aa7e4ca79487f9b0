"""Group commit of several Sessions' appends on PostgreSQL (`PostgresBackend.append`).

When many Sessions write at once (a storm of reminders due together), one
statement and one commit per Session costs each its own round trip, pool
hand-over and transaction. `Rounds` gathers them instead:

- An append joins the queue. If fewer than `in_flight` rounds are being
  committed, it **leads** a round: it takes what is queued (in order, at
  most `limit` Sessions, each Session at most once and never one whose
  earlier append is still in flight — a Session's appends stay in order)
  and commits it; otherwise it waits until a round carried it, or a round
  ended and it may lead the next (a round that ends wakes only the appends
  it carried and as many waiting ones as rounds may start). An append
  nobody else is writing beside is therefore sent at once, alone, as
  before (`one`: `dsh_append`).
- A round of several (`several`: `dsh_append_round`) is one statement and
  one transaction. Each Session's append in it is fenced and checked as
  alone (its lease epoch, its cursor) in a subtransaction of its own, so a
  refused one (`LeaseLost`, `IntegrityError`, a refused value) fails alone
  and the others commit. Items go in Session-id order, the order a lease
  renewal locks its rows in too (`leases`), so neither can deadlock the
  other.
- A round that fails as a whole (the connection, the server) fails every
  append in it with the same `StorageError`: whether it committed is
  unknown, as for any failed append, and the coordinator's recovery reads
  back what is stored (rule 4 of `dsh.persistence.coordinator`). A round
  with a value refused — by psycopg before sending, or by the server for
  the statement as a whole (SQLSTATE class 22 or 54) — stored nothing;
  each append is then written alone, so the refusal stays with its Session.
- A leader cancelled while its round is committing leaves the round's
  outcome unknown: the other appends in it fail with a `StorageError`
  saying so (and are recovered as above); the leader's own is cancelled.

`limit` defaults to 64: PostgreSQL keeps 64 subtransactions per transaction
in shared memory, and a transaction with more makes every other snapshot
look them up on disk.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import anyio

from ..errors import StorageError

__all__ = ["ROUND_LIMIT", "Append", "Rounds"]

ROUND_LIMIT = 64


@dataclass(eq=False, slots=True)
class Append:
    """One Session's batch on its way to `dsh_append` (its arguments, in order)."""

    session_id: str
    start: int
    types: list[str]
    bodies: list[str]
    set_title: bool
    title: str | None
    preview: str | None
    owner: str | None
    epoch: int | None
    taken: bool = False  # in a round being committed
    processed: bool = False  # its outcome is known (stored, or `error`)
    done: bool = False  # its round finished
    error: Exception | None = None
    woken: anyio.Event | None = None  # set when done, or when it may lead a round

    def arguments(self) -> tuple[object, ...]:
        return (
            self.session_id,
            self.start,
            self.types,
            self.bodies,
            self.set_title,
            self.title,
            self.preview,
            self.owner,
            self.epoch,
        )


class Rounds:
    """The queue of one backend's appends and the rounds that commit them (module docstring).

    `one(append)` writes a single append (raising its `StorageError`);
    `several(round)` writes several in one transaction, setting each one's
    `error`, and returns False if nothing was sent (a value refused before
    sending), or raises the `StorageError` of the round as a whole.
    """

    def __init__(
        self,
        one: Callable[[Append], Awaitable[None]],
        several: Callable[[Sequence[Append]], Awaitable[bool]],
        *,
        in_flight: int,
        limit: int = ROUND_LIMIT,
    ) -> None:
        if in_flight < 1 or limit < 1:
            raise ValueError(
                f"rounds need in_flight and limit of at least 1, not {in_flight} and {limit}"
            )
        self._one = one
        self._several = several
        self.in_flight = in_flight
        self.limit = limit
        self._queue: list[Append] = []
        self._writing: set[str] = set()  # Sessions with an append in a round in flight
        self._running = 0
        self.rounds = 0  # rounds committed (of any size), for the bench and tests
        self.grouped = 0  # appends committed in rounds of several

    async def commit(self, append: Append) -> None:
        """Commit `append` (alone or in a round); raises its `StorageError`."""
        self._queue.append(append)
        try:
            while not append.done:
                if (
                    not append.taken
                    and self._running < self.in_flight
                    and append.session_id not in self._writing
                ):
                    await self._lead()
                else:
                    append.woken = anyio.Event()
                    await append.woken.wait()
        except BaseException:
            if not append.taken and append in self._queue:
                self._queue.remove(append)
                self._wake_leaders()  # it may have been woken to lead: another will
            raise
        if append.error is not None:
            raise append.error

    def _wake_leaders(self) -> None:
        """Wake as many waiting appends as rounds may start, each to lead one.

        Only those: a round that ends wakes the appends it carried and these,
        never every waiting append (thousands in a storm, most of which would
        only wait again).
        """
        free = self.in_flight - self._running
        for append in self._queue:
            if free <= 0:
                return
            if append.session_id not in self._writing and append.woken is not None:
                append.woken.set()
                free -= 1

    def _take(self) -> list[Append]:
        """The next round: queued appends in order, one per Session, none whose Session
        is being written, at most `limit`."""
        round_: list[Append] = []
        chosen: set[str] = set()
        kept: list[Append] = []
        for append in self._queue:
            if (
                len(round_) < self.limit
                and append.session_id not in chosen
                and append.session_id not in self._writing
            ):
                chosen.add(append.session_id)
                append.taken = True
                round_.append(append)
            else:
                kept.append(append)
        self._queue = kept
        self._writing |= chosen
        return round_

    async def _lead(self) -> None:
        round_ = self._take()
        self._running += 1
        try:
            await self._commit(round_)
        finally:
            self._running -= 1
            self._writing.difference_update(append.session_id for append in round_)
            for append in round_:
                if not append.processed:
                    append.error = StorageError(
                        f"session {append.session_id}: the round that carried events from "
                        f"{append.start} was cancelled; whether they are stored is unknown"
                    )
                append.done = True
                if append.woken is not None:
                    append.woken.set()
            self._wake_leaders()

    async def _commit(self, round_: list[Append]) -> None:
        self.rounds += 1
        if len(round_) > 1:
            round_.sort(key=lambda append: append.session_id)  # one locking order
            try:
                sent = await self._several(round_)
            except StorageError as error:
                for append in round_:
                    append.error, append.processed = error, True
                return
            if sent:
                self.grouped += len(round_)
                for append in round_:
                    append.processed = True
                return
        for append in round_:  # alone, or each alone after a refused value
            try:
                await self._one(append)
            except StorageError as error:
                append.error = error
            append.processed = True
