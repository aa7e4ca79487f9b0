"""Follow-ups: which durable dispatches have no stored reminder message yet.

A delivery is two things in the log: the `dispatch` (the receipt), then the
`message/user` its follow-up becomes when the agent's turn takes it, with
`source: {"kind": "schedule", "dispatchSeq": <the dispatch's seq>, ...}`.
Until that turn starts the follow-up lives only in the agent's inbox, so a
process that dies — or an agent that closes — between the two keeps the
receipt and loses the model's turn. `Followups` knows, incrementally, which
of a fold's dispatches are in that state, so that the owner installed by the
next resume or wake queues each of them again (`owner`, DESIGN §8):

1. a v2 dispatch the fold accepts at seq `s` is *unanswered* from then on;
2. a `message/user` at a seq after `s` whose source has `"kind": "schedule"`
   and names `s` — as its `dispatchSeq`, or among its `dispatchSeqs` (one
   follow-up standing for the dispatches of one coalesced delivery) —
   answers it, for good;
3. only `message/user` events from the earliest unanswered dispatch on are
   read, each at most once over the fold's life: a log whose follow-ups are
   all stored reads just the few messages between each dispatch and its
   follow-up, never the whole conversation.

v1 dispatches are not tracked: the follow-ups of that edition named no
dispatch, so none could ever be matched. What `Unanswered` keeps is what
the follow-up's frame is built from (the record the dispatch followed, the
occurrence, `missed` and the occurrence owed after it), so the frame does
not depend on the reminder still being active.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dsh import USER_MESSAGE

from .protocol import Record
from .protocol.plain import PlainRecord
from .series import Following

if TYPE_CHECKING:
    from dsh import SessionEvent, SessionLog

__all__ = ["Followups", "Unanswered", "answered_seqs"]

_TYPES = frozenset({USER_MESSAGE})


@dataclass(frozen=True, slots=True)
class Unanswered:
    """A dispatch at `seq` whose follow-up message is not in the log."""

    seq: int
    plain: PlainRecord
    """The record the dispatch followed (its plain form)."""
    occurrence_ms: int
    missed: int
    following: int | Following | None
    """What the reminder owed after this delivery (None: it was the last), a cron rule's
    looked up when first asked."""

    @property
    def reminder_id(self) -> str:
        return self.plain.id

    @property
    def following_ms(self) -> int | None:
        """What the reminder owed after this delivery (None: it was the last)."""
        following = self.following
        return following.ms() if isinstance(following, Following) else following

    def record(self) -> Record:
        """The record the dispatch followed, as the model."""
        return Record.model_validate(self.plain.data)


def answered_seqs(data: object) -> list[int]:
    """The dispatch seqs a `message/user` payload is the schedule follow-up of (rule 2)."""
    source = data.get("source") if isinstance(data, dict) else None
    if not isinstance(source, dict) or source.get("kind") != "schedule":
        return []
    named = source.get("dispatchSeqs", [source.get("dispatchSeq")])
    if not isinstance(named, list):
        return []
    return [seq for seq in named if type(seq) is int]


class Followups:
    """The unanswered dispatches of one fold (see the module docstring)."""

    __slots__ = ("_position", "_waiting")

    def __init__(self, position: int = 0) -> None:
        self._position = position
        # By seq, in the order the fold accepted them: the first is the earliest.
        self._waiting: dict[int, Unanswered] = {}

    def copy(self) -> Followups:
        twin = Followups(self._position)
        twin._waiting = dict(self._waiting)
        return twin

    def dispatched(self, item: Unanswered) -> None:
        """The fold accepted the dispatch `item.seq` (rule 1)."""
        self._waiting[item.seq] = item

    def advance(self, log: SessionLog, end: int) -> None:
        """Read the `message/user` events of `[position, end)` that may answer a dispatch."""
        if self._waiting and self._position < end:
            start = max(self._position, next(iter(self._waiting)))
            for event in log.scan(start, end, types=_TYPES):
                self._answer(event)
                if not self._waiting:
                    break
        self._position = max(self._position, end)

    def unanswered(self) -> list[Unanswered]:
        """The dispatches without a stored follow-up, oldest first."""
        return list(self._waiting.values())

    def _answer(self, event: SessionEvent) -> None:
        for seq in answered_seqs(event.data):
            if seq < event.seq:
                self._waiting.pop(seq, None)
