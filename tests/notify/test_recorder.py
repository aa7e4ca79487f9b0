"""`Recorder`: one delivery per alert and target, idempotent, recorded before anything is sent."""

from __future__ import annotations

import pytest
from dsh_notify.outbox import MemoryOutbox
from dsh_notify.recorder import Recorder, message_of

from dsh import Alert, SnoozeAction
from dsh.testing import FakeClock

from .support import ScriptedChannel

pytestmark = pytest.mark.anyio


def alert(seq: int, session_id: str = "s 1") -> Alert:
    snooze = SnoozeAction(plugin="tool-schedule", action="snooze", args={"dispatchSeq": seq})
    return Alert(session_id, seq, "title", "body", "tag", 5, snooze)


async def test_each_alert_goes_to_each_target_of_each_channel_once() -> None:
    outbox = MemoryOutbox()
    woken = []
    channels = [ScriptedChannel("a", ["1", "2"]), ScriptedChannel("b", ["3"])]
    recorder = Recorder(outbox, lambda: channels, FakeClock(), lambda: woken.append(1))
    recorder.ready.set()
    await recorder([alert(1), alert(2)])
    assert outbox.counts.pending == 6 and woken == [1]
    await recorder([alert(1)])  # handed over again after a crash
    assert outbox.counts.pending == 6 and woken == [1]
    assert [c.sent for c in channels] == [[], []]  # nothing sent by the sink


def test_the_message_links_to_the_session_and_keeps_the_snooze() -> None:
    message = message_of(alert(3))
    assert message.url == "/?session=s%201"
    assert message.snooze == alert(3).snooze
    assert (message.session_id, message.seq, message.title) == ("s 1", 3, "title")
