"""SIGKILL at the two exact moments of a reminder delivery that a random kill rarely hits.

`wrapped_dsh.py` makes the real `dsh web` kill itself inside the first
delivery (`DSH_TEST_KILL_AT`):

- **after the dispatch is appended, before anything of it is durable** — the
  reminder frame is already queued for the model: the window DESIGN §8 calls
  out. After a restart and a resume, the record is still active in storage
  and is delivered again — exactly once in storage, never lost;
- **after the dispatch is durable, before the reminder message is
  appended** — the receipt stands: after a restart it is shown from history,
  the reminder is not dispatched a second time, and the resumed owner queues
  the lost follow-up again, so its turn runs: one stored follow-up, answered;
- **after that re-queue, before it is stored** — the next resume queues it
  again: still one dispatch, one stored follow-up (at-least-once until the
  follow-up is stored, never again after).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.webhost import WebHost, wait_for

from .figures import Figures
from .stored import own_events, read_data_dir, reminder_messages, schedule_changes

pytestmark = [pytest.mark.reliability, pytest.mark.crash]

WRAPPER = Path(__file__).with_name("wrapped_dsh.py")


def changes(web: WebHost, session_id: str) -> list[str]:
    stored = read_data_dir(web.data_dir).sessions[session_id]
    return [change["change"] for _seq, change in schedule_changes(own_events(stored))]


def killed_inside_delivery(tmp_path: Path, point: str) -> tuple[WebHost, str]:
    """Boot with the kill armed, request a reminder, return once the host killed itself."""
    web = WebHost(
        data_dir=tmp_path / point,
        model="demo",
        dsh=[sys.executable, str(WRAPPER)],
        extra_env={"DSH_TEST_KILL_AT": point},
    )
    web.boot()
    session_id = web.create_session()
    response = web.post(
        f"/api/sessions/{session_id}/messages", {"text": "remind me in 1 second to x"}
    )
    assert response.status_code == 202
    assert web.process is not None
    wait_for(lambda: web.process is not None and web.process.poll() is not None, timeout=15)
    assert web.process.returncode == -signal.SIGKILL
    del web.extra_env["DSH_TEST_KILL_AT"]
    return web, session_id


def resumed_until(web: WebHost, session_id: str, done: Any) -> dict[str, Any]:
    web.boot()
    assert web.post(f"/api/sessions/{session_id}/resume").status_code == 200
    return wait_for(lambda: done(web.all_events(session_id)) or None, what="the redelivery")


def test_a_kill_after_the_dispatch_is_queued_but_not_durable_redelivers_exactly_once(
    tmp_path: Path, figures: Figures
) -> None:
    web, session_id = killed_inside_delivery(tmp_path, "after-dispatch-append")
    try:
        assert changes(web, session_id) == ["create"], "nothing of the dispatch may be durable"

        def delivered(page: dict[str, Any]) -> bool:
            events = page["events"]
            dispatched = [
                event["seq"]
                for event in events
                if event["type"] == "schedule/change" and event["data"]["change"] == "dispatch"
            ]
            last = events[-1]
            return bool(dispatched) and last["type"] == "turn/end" and last["seq"] > dispatched[0]

        resumed_until(web, session_id, delivered)
        assert web.terminate() == 0
        assert changes(web, session_id) == ["create", "dispatch"]
        stored = read_data_dir(web.data_dir).sessions[session_id]
        assert [rid for _seq, rid in reminder_messages(own_events(stored))] == ["rem-1"]
    finally:
        web.stop()
    figures.count("crash_window", "kills_after_dispatch_append")
    figures.count("crash_window", "redelivered_exactly_once")


def answered_followup(page: dict[str, Any]) -> dict[str, Any] | None:
    """The receipt once the follow-up of the one dispatch is stored and its turn answered."""
    views: dict[str, Any] = page["views"]
    events = page["events"]
    followups = [
        event["seq"]
        for event in events
        if event["type"] == "message/user" and event["data"]["source"]["kind"] == "schedule"
    ]
    answered = (
        [event for event in events[followups[0] :] if event["type"] == "turn/end"][:1]
        if followups
        else []
    )
    return next(iter(views.values()), None) if answered else None


def check_one_followup(web: WebHost, session_id: str) -> None:
    """One dispatch, one stored follow-up naming it (re-queued), answered by the model."""
    assert web.terminate() == 0
    assert changes(web, session_id) == ["create", "dispatch"]
    stored = own_events(read_data_dir(web.data_dir).sessions[session_id])
    [dispatch_seq] = [
        seq for seq, change in schedule_changes(stored) if change["change"] == "dispatch"
    ]
    [(seq, rid)] = list(reminder_messages(stored))
    source = stored[seq].data["source"]  # type: ignore[index]
    assert (rid, source["dispatchSeq"], source["requeued"]) == ("rem-1", dispatch_seq, True)
    assert [event.type for event in stored[seq + 1 :]][:1] == ["message/assistant"]


def test_a_kill_after_the_durable_dispatch_keeps_the_receipt_and_queues_its_turn_again(
    tmp_path: Path, figures: Figures
) -> None:
    web, session_id = killed_inside_delivery(tmp_path, "after-dispatch-barrier")
    try:
        assert changes(web, session_id) == ["create", "dispatch"]
        stored = own_events(read_data_dir(web.data_dir).sessions[session_id])
        assert list(reminder_messages(stored)) == [], "the follow-up died with the process"
        view = resumed_until(web, session_id, answered_followup)
        assert view["scheduleId"] == "rem-1" and view["prompt"] == "x"
        check_one_followup(web, session_id)
    finally:
        web.stop()
    figures.count("crash_window", "kills_after_durable_dispatch")
    figures.count("crash_window", "followups_queued_again_and_answered")


def test_a_kill_after_the_requeue_queues_the_followup_again_until_it_is_stored(
    tmp_path: Path, figures: Figures
) -> None:
    web, session_id = killed_inside_delivery(tmp_path, "after-dispatch-barrier")
    try:
        web.extra_env["DSH_TEST_KILL_AT"] = "after-requeue"
        web.boot()
        assert web.post(f"/api/sessions/{session_id}/resume").status_code == 200
        assert web.process is not None
        wait_for(lambda: web.process is not None and web.process.poll() is not None, timeout=15)
        assert web.process.returncode == -signal.SIGKILL
        del web.extra_env["DSH_TEST_KILL_AT"]
        stored = own_events(read_data_dir(web.data_dir).sessions[session_id])
        assert list(reminder_messages(stored)) == []
        resumed_until(web, session_id, answered_followup)
        check_one_followup(web, session_id)
    finally:
        web.stop()
    figures.count("crash_window", "kills_after_requeue")
    figures.count("crash_window", "followups_queued_again_and_answered")
