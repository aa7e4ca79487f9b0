"""Reading what a data directory really holds, with the product's own readers.

Every log is read through `dsh.persistence.JsonlBackend.inspect`, which
raises `CorruptLog` for any malformed line that is not a torn last line: a
log that reads here is a log the host can resume. Logs in the trash (an
unused Session `dsh web` moved there when it went cold) are still stored:
they are read with the same line parsers and listed in `trashed`. The schedule state of a
stored Session is derived with the plugin's own pure fold over the Session's
fold range (`seedLength` on for a fork), exactly as a resumed owner derives it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from dsh.persistence import JsonlBackend, StoredSession
from dsh.persistence.jsonl.format import parse_event, parse_header
from dsh.session.event import SessionEvent
from dsh.session.log import Session
from dsh_tool_schedule import ScheduleFold
from dsh_tool_schedule.followups import answered_seqs
from dsh_tool_schedule.protocol import EVENT_TYPE

__all__ = [
    "DataDir",
    "Followups",
    "carried_reminders",
    "followups_of",
    "own_events",
    "read_data_dir",
    "reminder_messages",
    "schedule_changes",
]


@dataclass(frozen=True)
class DataDir:
    """Every stored Session of a data directory, and what else lies in its folder."""

    sessions: dict[str, StoredSession]
    torn_tails: int
    leftover_temp_files: int
    trashed: frozenset[str] = frozenset()

    def fold(self, session_id: str) -> ScheduleFold:
        stored = self.sessions[session_id]
        return ScheduleFold.of(Session(stored.header, stored.events))


def read_data_dir(data_dir: Path) -> DataDir:
    """Inspect every `*.jsonl` log under `data_dir/sessions` (raises on a corrupt one)."""

    async def read() -> DataDir:
        backend = JsonlBackend(data_dir)
        folder = backend.directory
        names = sorted(folder.iterdir()) if folder.is_dir() else []
        sessions: dict[str, StoredSession] = {}
        torn = temps = 0
        for path in names:
            if path.name.startswith(".") and path.name.endswith(".tmp"):
                temps += 1
                continue
            assert path.suffix == ".jsonl", f"unexpected file in the sessions folder: {path}"
            stored = await backend.inspect(path.stem)
            assert stored is not None, path
            sessions[path.stem] = stored
            torn += stored.torn_tail
        listed = {summary.id for summary in await backend.list()}
        assert listed == set(sessions), f"list() and the folder disagree: {listed ^ set(sessions)}"
        await backend.aclose()
        trashed = read_trash(backend.trash_directory)
        assert not trashed.keys() & sessions.keys(), "a Session both stored and in the trash"
        return DataDir({**sessions, **trashed}, torn, temps, frozenset(trashed))

    return anyio.run(read)


def read_trash(folder: Path) -> dict[str, StoredSession]:
    """The logs in the trash (whole lines only: a trashed log was closed cleanly)."""
    trashed: dict[str, StoredSession] = {}
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        head, *lines = path.read_bytes().split(b"\n")[:-1]
        events = tuple(parse_event(path, seq, line) for seq, line in enumerate(lines))
        header = parse_header(path, path.stem, head)
        trashed[path.stem] = StoredSession(header=header, events=events, torn_tail=False)
    return trashed


def own_events(stored: StoredSession) -> tuple[SessionEvent, ...]:
    """The events a Session owns: from `seedLength` on for a fork, else all of them."""
    return stored.events[stored.header.seed_length or 0 :]


def schedule_changes(events: tuple[SessionEvent, ...]) -> Iterator[tuple[int, dict[str, Any]]]:
    """`(seq, data)` of every `schedule/change` event among `events`."""
    for event in events:
        if event.type == EVENT_TYPE and isinstance(event.data, dict):
            yield event.seq, event.data


def reminder_messages(events: tuple[SessionEvent, ...]) -> Iterator[tuple[int, str]]:
    """`(seq, reminder id)` of each reminder a `message/user` the schedule plugin queued carries.

    A follow-up that delivers several reminders due in the same second (one turn, coalesced)
    names them all in `scheduleIds`: it yields one pair per reminder, in that order.
    """
    for event in events:
        if event.type != "message/user" or not isinstance(event.data, dict):
            continue
        for reminder in carried_reminders(event.data.get("source")):
            yield event.seq, reminder


def carried_reminders(source: object) -> list[str]:
    """The reminder ids a `message/user` `source` delivers: none unless it is the schedule
    plugin's; every one of `scheduleIds` for a coalesced follow-up, else its `scheduleId`."""
    if not isinstance(source, dict) or source.get("kind") != "schedule":
        return []
    return [str(reminder) for reminder in source.get("scheduleIds", [source.get("scheduleId")])]


@dataclass(frozen=True)
class Followups:
    """Per dispatch seq: the seqs of the stored follow-ups that name it, and of those whose
    turn the model answered (a `message/assistant` before the next `message/user`)."""

    stored: dict[int, list[int]]
    answered: set[int]
    requeued: int


def followups_of(events: tuple[SessionEvent, ...]) -> Followups:
    """The schedule follow-ups among `events`, by the dispatch(es) each names."""
    stored: dict[int, list[int]] = {}
    answered: set[int] = set()
    requeued = 0
    current: int | None = None
    for event in events:
        if event.type == "message/user":
            current = None
            named = answered_seqs(event.data)
            for dispatch_seq in named:
                stored.setdefault(dispatch_seq, []).append(event.seq)
            if named:
                current = event.seq
                source = event.data["source"]  # type: ignore[index,call-overload]
                requeued += source.get("requeued") is True
        elif event.type == "message/assistant" and current is not None:
            answered.add(current)
            current = None
    return Followups(stored, answered, requeued)
