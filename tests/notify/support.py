"""Helpers shared by the dsh-notify tests: messages, deliveries and a scriptable channel."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
from dsh_notify.channel import Accepted, Message, Outcome
from dsh_notify.outbox import Delivery

from dsh import SnoozeAction

START_MS = 1_767_225_600_000  # FakeClock's default wall time


def message(seq: int = 1, session_id: str = "s1", *, snooze: bool = False) -> Message:
    action = SnoozeAction(plugin="tool-schedule", action="snooze", args={"dispatchSeq": seq})
    return Message(
        session_id,
        seq,
        f"reminder {seq}",
        "due now",
        f"tag-{seq}",
        START_MS,
        f"/?session={session_id}",
        action if snooze else None,
    )


def delivery(
    seq: int = 1, channel: str = "test", target: str = "t1", *, at: int = START_MS
) -> Delivery:
    return Delivery.new(channel, target, message(seq), at)


@dataclass
class ScriptedChannel:
    """A channel whose sends answer what the test scripts (`Accepted` once the script ends).

    `sent` records (target, seq) of every send; `hold` makes sends wait until set.
    """

    name: str = "test"
    target_ids: Sequence[str] = ("t1",)
    script: deque[Outcome | BaseException] = field(default_factory=deque)
    sent: list[tuple[str, int]] = field(default_factory=list)
    hold: anyio.Event | None = None

    async def targets(self) -> Sequence[str]:
        return list(self.target_ids)

    async def send(self, target: str, message: Message) -> Outcome:
        self.sent.append((target, message.seq))
        if self.hold is not None:
            await self.hold.wait()
        answer = self.script.popleft() if self.script else Accepted()
        if isinstance(answer, BaseException):
            raise answer
        return answer
