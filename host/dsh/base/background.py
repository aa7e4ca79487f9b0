"""`Background`: what a host puts off while it does what cannot wait.

Some work is the promise itself and is due at an instant: a reminder's
durable dispatch (the receipt the person sees). Other work follows from it or
loses nothing by coming a little later: the follow-up turn the dispatch
queued, the search index of what was stored, the alerts derived from it. On a
quiet host the order never shows. In a storm — 10,000 reminders due in the
same second — it decides how late the last dispatch is stored, since every
unit of background work the event loop runs between two dispatches pushes
every later one back. One `Background` per Host keeps that order:

1. `urgent()` marks work that goes first for as long as it runs (a plain
   context manager; holds nest and are counted, so a storm of dispatches is
   one long urgent stretch).
2. `await yield_to_urgent()` is what a unit of background work calls before
   it starts. It returns at once while nothing urgent runs; otherwise when
   the last urgent hold ends, or after `patience` seconds, whichever comes
   first. Background work is delayed, never starved: a host whose urgent
   work never pauses still moves each waiting unit on after `patience`.
3. `turn()` is the slot a background turn (a plugin's follow-up, never a
   person's message) runs in: it yields to urgent work, then takes one of
   `turns` slots, in the order asked. However many follow-ups a storm
   queues, at most `turns` run at once — so they cannot crowd out the
   dispatches still to come, and each of them still runs.
4. `later(start)` holds back the *start* of background work: while urgent
   work runs, `start()` is called (in the order asked) once the last urgent
   hold ends, or `patience` seconds after `later`, whichever comes first —
   the same wait as rule 2, without a task per waiter. A storm's thousands
   of follow-ups so cost a list entry each until the dispatches are stored,
   not a task, a cancel scope and a timer each started between two
   dispatches. It returns False (start now) while nothing is urgent, and
   until the Host has given the Background its tasks (`start`).

The patience is real time, not the host's clock: this is about sharing one
event loop, which a fake clock does not run.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
from anyio.abc import TaskGroup

from .tasks import TaskSet

__all__ = ["BACKGROUND_TURNS", "PATIENCE_SECONDS", "Background"]

# A follow-up turn mostly waits on its model; 64 at once keeps a storm's
# model calls within what one provider connection pool serves (httpx's
# default is 100), and a queued one holds only its message.
BACKGROUND_TURNS = 64
# Long enough for a storm's dispatches to go first: 10,000 due at once are stored
# within 3–3.5 s on the 2-core development machine once follow-ups wait for
# them (`bench` storm-hot), and a follow-up let go after 1 s pushed the last
# dispatches back by a third (p99 4.0 and 5.3 s at 1 s against 3.0 and 3.1 s at
# 5 s, two pairs). Outside a storm urgent work lasts milliseconds, so this is
# how late background work can be only while a storm is being stored — and
# alerts, derived from durable dispatches, come no later for it.
PATIENCE_SECONDS = 5.0

log = logging.getLogger(__name__)


class Background:
    """The order between urgent work and background work on one host."""

    def __init__(
        self, *, turns: int = BACKGROUND_TURNS, patience: float = PATIENCE_SECONDS
    ) -> None:
        if turns < 1:
            raise ValueError(f"background turns must be at least 1, not {turns}")
        if not patience >= 0:
            raise ValueError(f"patience must not be negative, not {patience}")
        self.turns = turns
        self.patience = patience
        self._holds = 0
        self._quiet: anyio.Event | None = None  # made when someone waits
        self._slots: anyio.CapacityLimiter | None = None  # made in the event loop
        self._tasks: TaskSet | None = None
        # Rule 4: (when asked, on the loop's clock; start), oldest first.
        self._later: deque[tuple[float, Callable[[], None]]] = deque()
        self._releasing = False

    def start(self, group: TaskGroup) -> TaskSet:
        """Let `later` hold work back, releasing it from a task in `group` (rule 4).
        Returns that task's set: closing it ends rule 4 (`later` then returns False)."""
        self._tasks = TaskSet(group, name="background")
        return self._tasks

    @property
    def urgent_now(self) -> int:
        """How many urgent holds are running."""
        return self._holds

    @property
    def held_back(self) -> int:
        """How many starts `later` holds back now."""
        return len(self._later)

    @property
    def turns_running(self) -> int:
        """How many background turns hold a slot now."""
        return 0 if self._slots is None else int(self._slots.borrowed_tokens)

    @contextmanager
    def urgent(self) -> Iterator[None]:
        """Run the body as urgent work: background work waits for it (rule 2)."""
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
            if self._holds == 0 and self._quiet is not None:
                self._quiet.set()
                self._quiet = None

    async def yield_to_urgent(self) -> None:
        """Return once no urgent work runs, or after `patience` seconds (rule 2)."""
        if self._holds == 0:
            return
        if self._quiet is None:
            self._quiet = anyio.Event()
        with anyio.move_on_after(self.patience):
            await self._quiet.wait()

    @asynccontextmanager
    async def turn(self, *, waited: bool = False) -> AsyncIterator[None]:
        """Hold one background turn's slot for the body (rule 3). `waited`: the turn's
        start was already held back by `later`, so it does not yield to urgent work again."""
        if not waited:
            await self.yield_to_urgent()
        if self._slots is None:
            self._slots = anyio.CapacityLimiter(self.turns)
        async with self._slots:
            yield

    def later(self, start: Callable[[], None]) -> bool:
        """Call `start()` once urgent work lets background work go (rule 4); False, without
        calling it, when it may start now."""
        tasks = self._tasks
        if self._holds == 0 or tasks is None or tasks.closed:
            return False
        self._later.append((anyio.current_time(), start))
        if not self._releasing:
            self._releasing = True
            tasks.start_soon(self._release, name="background starts held back")
        return True

    async def _release(self) -> None:
        """The one task behind rule 4: start what waited its patience, or all once quiet."""
        waiting = self._later
        try:
            while waiting:
                if self._holds:
                    remaining = waiting[0][0] + self.patience - anyio.current_time()
                    if remaining > 0:
                        if self._quiet is None:
                            self._quiet = anyio.Event()
                        with anyio.move_on_after(remaining):
                            await self._quiet.wait()
                        continue
                now = anyio.current_time()
                while waiting and (not self._holds or waiting[0][0] + self.patience <= now):
                    _, start = waiting.popleft()
                    try:
                        start()
                    except Exception:
                        log.exception("background: starting %r failed", start)
        finally:
            self._releasing = False
            waiting.clear()  # cancelled: the host is closing, and so is what waited
