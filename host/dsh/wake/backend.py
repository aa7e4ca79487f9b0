"""Where the wake index is kept between runs: the `WakeBackend` interface.

The wake index (`dsh.wake.index`) lives in memory while the host runs; a
`WakeBackend` keeps a durable copy so that start-up reads one index instead of
every log. It is never the authority: the Session logs are. So a store may
lose its copy at any time (`load` then reports a problem and the host
rebuilds from the logs), but it must never *silently* hold less than it
acknowledged: `write` and `replace` return only once what they were given is
durable, or raise.

An entry is a `WakeEntry` per Session id:

- `wake_at`: the earliest epoch ms any plugin's `dsh_session_wake_at`
  answered when the Session last went cold (None: no plugin needs it);
- `dirty`: the Session went live after that answer and has not been closed
  cleanly since, so the answer may be out of date and start-up derives it
  again from the log.

An entry with neither (`WakeEntry()`) is the absence of an entry: writing it
removes the Session from the index.

A second implementation (`dsh.persistence.postgres.wake`, for several
hosts on one database) keeps the entries as rows shared by every host
(`shared`) and implements `claim` — a host takes a due entry with `FOR
UPDATE SKIP LOCKED` before waking its Session, so exactly one host wakes it
— and `due`, the sweep through which a host learns what other hosts left
due. One host on its own data directory always wins the claim (the
default) and has nothing to sweep.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .errors import WakeBackendError

__all__ = ["LoadedIndex", "MemoryWakeBackend", "WakeBackend", "WakeBackendError", "WakeEntry"]


@dataclass(frozen=True, slots=True)
class WakeEntry:
    """What the index knows of one Session (see the module docstring)."""

    wake_at: int | None = None
    dirty: bool = False

    @property
    def empty(self) -> bool:
        """True for the absence of an entry (nothing to wake, nothing to derive)."""
        return self.wake_at is None and not self.dirty


Change = tuple[str, WakeEntry]


@dataclass(frozen=True, slots=True)
class LoadedIndex:
    """What `WakeBackend.load` found: the entries, or why they cannot be used.

    `problem` is None when `entries` is the whole stored index; otherwise it
    says why the index must be rebuilt from the logs (missing, unreadable,
    corrupt, another format version) and `entries` is empty. `missing` is
    True when no index was ever stored (a new store): the start-up that then
    finds no Session logs either has nothing to warn about.
    """

    entries: dict[str, WakeEntry] = field(default_factory=dict)
    problem: str | None = None
    missing: bool = False


class WakeBackend(abc.ABC):
    """A durable copy of the wake index (see the module docstring)."""

    #: Where the index is kept, for messages ("the wake index /data/wake-index.jsonl").
    description: str = "the wake index"
    #: True for an index several hosts share (PostgreSQL): each host's in-memory
    #: index then never rewrites it whole nor derives other hosts' dirty entries,
    #: and always marks a Session dirty before it goes live (its own view may be
    #: out of date).
    shared: bool = False
    #: How often a shared index is swept for what other hosts left due (`due`);
    #: None: never (a store only this host writes).
    sweep_seconds: float | None = None

    @abc.abstractmethod
    async def load(self) -> LoadedIndex:
        """Read the stored index. A problem with it is reported, not raised."""

    @abc.abstractmethod
    async def write(self, changes: Sequence[Change]) -> None:
        """Durably record `changes` (later ones win; an empty entry removes one).

        Returns once they are durable. Raises `WakeBackendError`; the stored
        index may then hold some of them or none.
        """

    @abc.abstractmethod
    async def replace(self, entries: Mapping[str, WakeEntry]) -> None:
        """Durably and atomically make `entries` the whole stored index.

        Afterwards `load` returns exactly `entries` (without empty ones).
        Raises `WakeBackendError`, leaving the previous index (or none).
        """

    @abc.abstractmethod
    async def discard(self) -> None:
        """Make the stored index unusable, so that the next `load` asks for a rebuild.

        What a host does when a write failed: an index that lacks a change
        it should hold must not be trusted at the next start. Raises
        `WakeBackendError` when even that fails.
        """

    async def claim(self, session_id: str) -> bool:
        """Take the right to wake `session_id` now; False if another host took it."""
        return True

    async def due(self, horizon_ms: int) -> list[Change]:
        """A shared index's entries due by `horizon_ms`, and its dirty ones, of Sessions
        no host holds or has claimed (what this host should wake or take over).
        Raises `WakeBackendError`. The default (an index only this host writes): none."""
        return []

    async def aclose(self) -> None:
        """Release what the store holds open. The default holds nothing."""
        return None


class MemoryWakeBackend(WakeBackend):
    """A wake store in memory: for the memory backend and tests (nothing survives).

    `fail_writes` makes `write` and `replace` raise (a test's broken disk);
    `fail_discard` makes `discard` raise too.
    """

    description = "the in-memory wake index"

    def __init__(self, entries: Mapping[str, WakeEntry] | None = None) -> None:
        self.entries: dict[str, WakeEntry] | None = (
            None if entries is None else {k: v for k, v in entries.items() if not v.empty}
        )
        self.writes: list[list[Change]] = []
        self.fail_writes = False
        self.fail_discard = False

    async def load(self) -> LoadedIndex:
        if self.entries is None:
            return LoadedIndex(problem="there is no wake index yet", missing=True)
        return LoadedIndex(dict(self.entries))

    async def write(self, changes: Sequence[Change]) -> None:
        if self.fail_writes:
            raise WakeBackendError(f"cannot write {self.description}: writes are failing")
        if self.entries is None:
            self.entries = {}
        self.writes.append(list(changes))
        for session_id, entry in changes:
            if entry.empty:
                self.entries.pop(session_id, None)
            else:
                self.entries[session_id] = entry

    async def replace(self, entries: Mapping[str, WakeEntry]) -> None:
        if self.fail_writes:
            raise WakeBackendError(f"cannot write {self.description}: writes are failing")
        self.entries = {k: v for k, v in entries.items() if not v.empty}

    async def discard(self) -> None:
        if self.fail_discard:
            raise WakeBackendError(f"cannot discard {self.description}")
        self.entries = None
