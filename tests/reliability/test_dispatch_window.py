"""SIGKILL at the two exact moments of a reminder delivery that a random kill rarely hits.

`wrapped_dsh.py` makes the real `dsh web` kill itself inside the first
delivery (`DSH_TEST_KILL_AT`):

- **after the dispatch is appended, before anything of it is durable** — the
  reminder frame is already queued for the model: the window DESIGN §8 calls
  out. After a restart and a resume, the record is still active in storage
  and is delivered again — exactly once in storage, never lost;
- **after the dispatch is durable, before the reminder message is
  appended** — the receipt stands: after a restart it is shown from history,
  and the reminder is not delivered a second time, although its model turn
  never happened (DESIGN §12: no promise that the model turn runs).
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


def test_a_kill_after_the_durable_dispatch_keeps_the_receipt_and_never_redelivers(
    tmp_path: Path, figures: Figures
) -> None:
    web, session_id = killed_inside_delivery(tmp_path, "after-dispatch-barrier")
    try:
        assert changes(web, session_id) == ["create", "dispatch"]

        def receipt(page: dict[str, Any]) -> dict[str, Any] | None:
            views: dict[str, Any] = page["views"]
            return next(iter(views.values()), None)

        view = resumed_until(web, session_id, receipt)
        assert view["scheduleId"] == "rem-1" and view["prompt"] == "x"
        listed = web.post(f"/api/sessions/{session_id}/messages", {"text": "list reminders"})
        assert listed.status_code == 202
        wait_for(
            lambda: web.all_events(session_id)["events"][-1]["type"] == "turn/end",
            what="a later turn, after which the owner has seen the log again",
        )
        assert web.terminate() == 0
        assert changes(web, session_id) == ["create", "dispatch"]
        stored = read_data_dir(web.data_dir).sessions[session_id]
        assert list(reminder_messages(own_events(stored))) == []
    finally:
        web.stop()
    figures.count("crash_window", "kills_after_durable_dispatch")
    figures.count("crash_window", "receipts_kept_without_redelivery")
