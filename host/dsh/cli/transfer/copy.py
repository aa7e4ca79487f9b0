"""Copying one store into another: `dsh store copy SRC DST` (DESIGN §4, §11).

What is copied, in this order, each through its own interface (`Backend`,
`WakeBackend`, `AttentionBackend`), so any pair of stores works:

1. **The trash** (`Backend.trashed`/`inspect_trashed`): each trashed log is
   created in DST and then trashed there. It goes first because a store may
   hold a stored Session and a trashed one under the same id, and a log can
   only reach DST's trash through its stored Sessions.
2. **Every stored Session**, one at a time, in id order. Each log is written
   in batches of `BATCH` events (`initialize`, then `append`), then **read
   back and compared event by event** (canonical bytes, and the header)
   before the next Session starts; a difference stops the copy
   (`CopyMismatch`).
3. **The wake entries** of the copied Sessions (`WakeBackend.load`, `write`).
   A source without a usable index gives each copied Session a dirty entry,
   so that DST's hosts derive it from its log. A JSONL destination without an
   index of its own gets one only when it holds nothing but copied Sessions
   (otherwise its next start rebuilds the whole index from the logs).
4. **The attention records** (`AttentionBackend.records`): alerts, how far
   they were derived and read marks, merged the way the backends merge them
   (marks only move forward, an alert kept once stays).

**Idempotent and resumable.** Nothing is ever overwritten: a log DST holds
already is compared with SRC's. Equal: nothing to do. A prefix of SRC's
(an interrupted copy, or SRC grew since the last one): only the missing
events are appended, and the whole log is compared again. Anything else —
another header, other events, a longer log — is a `CopyConflict` naming the
Session, found before anything is written where the summaries show it
(another creation time, a longer log). So a copy stopped at any point (a
SIGKILL included) continues when run again, and a second run of a finished
copy writes nothing. A trashed log left stored in DST by an interruption
between its creation and its trashing is recognised (its content equals
SRC's trashed log) and trashed.

The copy never holds the stores itself: `dsh.cli.transfer.holders` keeps
every `dsh web` out while it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ...attention.backend import KEEP_READ_MS, AttentionBackend, AttentionRecord
from ...persistence.backend import Backend, StoredSession, StoredSummary
from ...persistence.errors import StorageError
from ...session.event import SessionEvent
from ...wake.backend import WakeBackend, WakeEntry

__all__ = [
    "BATCH",
    "CopyConflict",
    "CopyMismatch",
    "CopyReport",
    "Progress",
    "Side",
    "copy_store",
]

#: Events per write: one statement or one fsync'd write each, well under any limit.
BATCH = 1000


class CopyConflict(StorageError):
    """DST holds another log under a Session id SRC has; nothing of it was touched."""


class CopyMismatch(StorageError):
    """A log read back from DST differs from what SRC holds."""


class Progress(Protocol):
    """Where the copy says how far it got (a bar on a terminal, plain lines otherwise)."""

    def start(self, what: str, total: int) -> None:
        """A phase begins: `total` things to go through."""

    def advance(self, events: int = 0) -> None:
        """One more thing done, which wrote `events` events."""

    def finish(self) -> None:
        """The phase is over."""


@dataclass(frozen=True, slots=True)
class Side:
    """One store: its Session logs, its wake index (None: it keeps none) and its attention
    records; `name` says which store it is in messages."""

    name: str
    backend: Backend
    wake: WakeBackend | None
    attention: AttentionBackend


@dataclass(slots=True)
class CopyReport:
    """What a copy did: `sessions` stored and `trashed` Sessions gone through, of which
    `written` had events or a creation written (`events` of them); wake entries and
    attention records written; `notes` for the person (what was left to DST's hosts)."""

    sessions: int = 0
    trashed: int = 0
    written: int = 0
    events: int = 0
    wake_entries: int = 0
    attention: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.wake_entries or self.attention)


async def copy_store(source: Side, target: Side, progress: Progress, *, now_ms: int) -> CopyReport:
    """Copy everything `source` holds into `target` (module docstring); the report.

    `now_ms` dates which read alerts are old enough to be left behind (a
    backend forgets them anyway). Raises `CopyConflict`, `CopyMismatch`,
    `StorageError`.
    """
    report = CopyReport()
    summaries = await source.backend.list()
    trashed: list[str] = await source.backend.trashed()
    theirs = await _check_summaries(source, target, summaries)
    progress.start("trash", len(trashed))
    for session_id in trashed:
        stored = await source.backend.inspect_trashed(session_id)
        if stored is not None:
            report.events += await _copy_trashed(source, target, stored, report)
        report.trashed += 1
        progress.advance()
    progress.finish()
    progress.start("sessions", len(summaries))
    copied: list[str] = []
    for summary in summaries:
        stored = await source.backend.inspect(summary.id)
        written = 0
        if stored is not None:
            written = await _copy_log(source, target, stored, report, held=summary.id in theirs)
            copied.append(summary.id)
        report.sessions += 1
        report.events += written
        progress.advance(written)
    progress.finish()
    await _copy_wake(source, target, copied, report)
    await _copy_attention(source, target, report, now_ms)
    return report


async def _check_summaries(
    source: Side, target: Side, summaries: Sequence[StoredSummary]
) -> set[str]:
    """Refuse before writing anything when DST's list already shows another log; the ids
    DST stores."""
    theirs = {item.id: item for item in await target.backend.list()}
    for ours in summaries:
        found = theirs.get(ours.id)
        if found is None:
            continue
        if found.created_at != ours.created_at or found.lineage != ours.lineage:
            raise _conflict(source, target, ours.id, "another Session (created at another time)")
        if found.length > ours.length:
            raise _conflict(
                source, target, ours.id, f"a longer log ({found.length} events, not {ours.length})"
            )
    return set(theirs)


def _conflict(source: Side, target: Side, session_id: str, what: str) -> CopyConflict:
    return CopyConflict(
        f"{target.name} already holds {what} under session id {session_id}, which "
        f"{source.name} holds too; nothing was overwritten (move one of them away, or copy "
        "into an empty store)"
    )


async def _copy_log(
    source: Side, target: Side, stored: StoredSession, report: CopyReport, *, held: bool = True
) -> int:
    """Make DST's log of `stored`'s Session equal to it; returns how many events it wrote.

    `held=False` says DST's list did not show the Session (no need to read it first).
    """
    session_id = stored.header.id
    there = await target.backend.inspect(session_id) if held else None
    start = _agreed(source, target, stored, there)
    if there is None:
        await target.backend.initialize(stored.header, stored.events[:BATCH])
        start = min(BATCH, len(stored.events))
    for offset in range(start, len(stored.events), BATCH):
        await target.backend.append(session_id, stored.events[offset : offset + BATCH])
    written = len(stored.events) - (len(there.events) if there is not None else 0)
    if there is None or written:
        report.written += 1
        await _verify(source, target, stored, await target.backend.inspect(session_id))
    return written


def _agreed(source: Side, target: Side, stored: StoredSession, held: StoredSession | None) -> int:
    """How many leading events DST already holds of `stored` (0 when it holds nothing);
    `CopyConflict` if what it holds is not a prefix of `stored`."""
    if held is None:
        return 0
    session_id = stored.header.id
    if held.header.canonical() != stored.header.canonical():
        raise _conflict(source, target, session_id, "another Session (another header)")
    if len(held.events) > len(stored.events):
        raise _conflict(source, target, session_id, f"a longer log ({len(held.events)} events)")
    differing = _first_difference(held.events, stored.events)
    if differing is not None:
        raise _conflict(source, target, session_id, f"another log (event {differing} differs)")
    return len(held.events)


def _first_difference(held: Sequence[SessionEvent], expected: Sequence[SessionEvent]) -> int | None:
    """The first seq where `held` differs from `expected`'s events, within `held`'s length."""
    for ours, theirs in zip(held, expected, strict=False):
        if ours.to_bytes() != theirs.to_bytes():
            return ours.seq
    return None


async def _verify(
    source: Side, target: Side, stored: StoredSession, back: StoredSession | None
) -> None:
    session_id = stored.header.id
    if back is None:
        raise CopyMismatch(f"session {session_id} is not in {target.name} after it was copied")
    if back.header.canonical() != stored.header.canonical():
        raise CopyMismatch(
            f"session {session_id} reads back from {target.name} with another header"
        )
    differing = _first_difference(back.events, stored.events)
    if differing is None and len(back.events) != len(stored.events):
        differing = min(len(back.events), len(stored.events))
    if differing is not None:
        raise CopyMismatch(
            f"session {session_id} reads back from {target.name} different from "
            f"{source.name} at event {differing}; the copy stopped there"
        )


async def _copy_trashed(
    source: Side, target: Side, stored: StoredSession, report: CopyReport
) -> int:
    """Put `stored` (a trashed log) into DST's trash; returns how many events it wrote."""
    session_id = stored.header.id
    there = await target.backend.inspect_trashed(session_id)
    if there is not None:
        _agreed(source, target, stored, there)
        if len(there.events) != len(stored.events):
            raise _conflict(source, target, session_id, "a shorter log in its trash")
        return 0
    held = await target.backend.inspect(session_id)
    if (
        held is not None
        and _first_difference(held.events, stored.events) is not None
        and await source.backend.cursor(session_id) is not None
    ):
        # SRC stores a Session under this id as well, and DST's is that one's copy: the
        # trashed log cannot reach DST's trash past it.
        raise _conflict(source, target, session_id, "a stored Session")
    written = await _copy_log(source, target, stored, report)
    await target.backend.trash(session_id)
    if held is not None and not written:
        report.written += 1  # only its trashing was left (an interrupted copy)
    return written


async def _copy_wake(source: Side, target: Side, copied: Sequence[str], report: CopyReport) -> None:
    if target.wake is None or not copied:
        return
    loaded = await source.wake.load() if source.wake is not None else None
    if loaded is None or loaded.problem is not None:
        why = "it keeps none" if loaded is None else loaded.problem
        report.notes.append(
            f"{source.name} has no wake index to copy ({why}): every copied Session is "
            f"marked to be derived again from its log by {target.name}'s hosts"
        )
        wanted = {session_id: WakeEntry(dirty=True) for session_id in copied}
    else:
        wanted = {sid: loaded.entries[sid] for sid in copied if sid in loaded.entries}
    present = await target.wake.load()
    if present.problem is not None and not target.wake.shared:
        others = {item.id for item in await target.backend.list()} - set(copied)
        if others:
            report.notes.append(
                f"{target.name} has no usable wake index ({present.problem}) and holds "
                "Sessions of its own: its next dsh web rebuilds the index from every log"
            )
            return
        await target.wake.replace(wanted)
        report.wake_entries += len(wanted)
        return
    changes = [
        (session_id, entry)
        for session_id, entry in wanted.items()
        if present.entries.get(session_id, WakeEntry()) != entry
    ]
    if changes:
        await target.wake.write(changes)
    report.wake_entries += len(changes)


async def _copy_attention(source: Side, target: Side, report: CopyReport, now_ms: int) -> None:
    theirs = {record.session_id: record for record in await target.attention.records()}
    for record in await source.attention.records():
        wanted = _kept(record, now_ms)
        there = theirs.get(record.session_id)
        if there is not None and _kept(there, now_ms) == wanted:
            continue
        if wanted.alerts or wanted.checked is not None:
            # An alert is only ever kept with its `checked` (recorded after it), so a
            # record with alerts has one; 0 would only say "derive from the start".
            await target.attention.record(record.session_id, wanted.alerts, wanted.checked or 0)
        if wanted.read:
            await target.attention.read(record.session_id, wanted.read)
        report.attention += 1


def _kept(record: AttentionRecord, now_ms: int) -> AttentionRecord:
    """`record` without the read alerts a backend may forget (older than `KEEP_READ_MS`):
    copying them would only have them forgotten again, and change every run."""
    alerts = tuple(
        alert
        for alert in record.alerts
        if alert.seq >= record.read or alert.at >= now_ms - KEEP_READ_MS
    )
    return AttentionRecord(record.session_id, record.checked, record.read, alerts)
