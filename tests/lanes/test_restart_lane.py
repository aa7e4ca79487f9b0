"""The loader/web restart lane: durable, session-local reminders across SIGKILL and restart.

`dsh web --overlay overlays/web-schedule` runs as a real process on one data
directory through three lives, driven only over HTTP and the WebSocket:

1. **first life** (scripted model): a *pending* reminder (5 s) and an
   *overdue* one (2 s) are created in two Sessions; the pending Session is
   forked before anything is due (the *early fork*); the host is SIGKILLed
   before either target.
2. **second life** (an empty script: every model call fails with
   `model_unavailable`): the pending Session is resumed before its target and
   fires once, not before it, with its receipt streamed raw and then again with
   its sidecar once stored; the overdue Session is resumed after its target
   passed and fires once, right away, framed "overdue by …"; the early fork is
   live meanwhile; after the parent's dispatch is stored it is forked again
   (the *late fork*), whose history shows the inherited receipt. SIGKILL.
3. **third life** (scripted model): cold history of every Session renders the
   receipts without starting an agent; then each Session is resumed and asked
   to list its reminders (none are active) and to set a 1 s *marker*; the
   marker's dispatch is the deterministic signal that the owner ran past every
   earlier target without redelivering anything.

Finally the JSONL files hold exactly one dispatch per reminder.

A second scenario (protocol v2) runs on an overlay that lowers
`min_interval_seconds`: an `at` reminder set as a wall time in Asia/Kolkata
and a reminder every 3 s (three times, its first occurrence given as an
explicit UTC `at`) are created, and the host is SIGKILLed before either is
due. It stays down through at least two occurrences of the recurring one;
once resumed, that one delivers a single catch-up — the latest missed
occurrence, `missed` counting the earlier ones — and then its next two
occurrences on schedule, while the zoned one fires at its instant, framed in
its zone and in UTC.

The same scenario runs against this checkout and against the built wheels
installed in a fresh virtual environment (`install` fixture).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.lanes.installs import Install
from tests.lanes.observe import (
    LiveFrames,
    ReminderFrame,
    changes,
    iso_ms,
    now_ms,
    own_events,
    wait_history,
)
from tests.support.webhost import OVERLAY, WebHost, wait_for

pytestmark = pytest.mark.lane

PENDING_AFTER = 5
OVERDUE_AFTER = 2
MARKER_AFTER = 1
PENDING_PROMPT = 'stretch <now> & say "hi"'
OVERDUE_PROMPT = "drink water — 喝水"
MARKER_PROMPT = "marker"
SCHEDULE_TOOLS = {"schedule_create", "schedule_update", "schedule_list", "schedule_delete"}

Event = dict[str, Any]
Page = dict[str, Any]
Reply = dict[str, Any]


def _create(prompt: str, seconds: int) -> Reply:
    return {
        "toolCalls": [
            {"name": "schedule_create", "arguments": {"prompt": prompt, "after_seconds": seconds}}
        ]
    }


FIRST_LIFE: list[Reply] = [
    _create(PENDING_PROMPT, PENDING_AFTER),
    {"text": "The pending reminder is set."},
    _create(OVERDUE_PROMPT, OVERDUE_AFTER),
    {"text": "The overdue reminder is set."},
]
SECOND_LIFE: list[Reply] = []  # every turn of this life fails: model_unavailable
THIRD_LIFE_PER_SESSION: list[Reply] = [
    {
        "toolCalls": [
            {"name": "schedule_list"},
            {
                "name": "schedule_create",
                "arguments": {"prompt": MARKER_PROMPT, "after_seconds": MARKER_AFTER},
            },
        ]
    },
    {"text": "Nothing else is pending; the marker is set."},
    {"text": "Marker noted."},  # the marker's follow-up turn
]


@dataclass
class Lane:
    """The Sessions of one run and their reminders' records."""

    parent: str = ""
    overdue: str = ""
    early_fork: str = ""
    late_fork: str = ""
    pending_record: dict[str, Any] | None = None
    overdue_record: dict[str, Any] | None = None

    @property
    def sessions(self) -> list[str]:
        return [self.parent, self.overdue, self.early_fork, self.late_fork]

    def due_ms(self, record: dict[str, Any] | None) -> int:
        assert record is not None
        return iso_ms(record["nextAt"])


def test_reminders_survive_sigkill_fire_once_and_stay_session_local(
    install: Install, tmp_path: Path
) -> None:
    run_restart_scenario(install, tmp_path)


def run_restart_scenario(install: Install, root: Path) -> None:
    """The whole lane against one installation (source or wheels)."""
    scripts = root / "scripts"
    scripts.mkdir()
    first = _script(scripts / "first.json", FIRST_LIFE)
    second = _script(scripts / "second.json", SECOND_LIFE)
    third = _script(scripts / "third.json", THIRD_LIFE_PER_SESSION * 4)
    data = root / "data"
    lane = Lane()
    with install.web(data, overlay=OVERLAY, model=f"scripted:{first}") as web:
        first_life(web, lane)
        web.model = f"scripted:{second}"
        web.boot()
        second_life(web, lane)
        web.model = f"scripted:{third}"
        web.boot()
        third_life(web, lane)
    check_stored_logs(data, lane)


def _script(path: Path, replies: list[Reply]) -> Path:
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


# -- the three lives ----------------------------------------------------------


def first_life(web: WebHost, lane: Lane) -> None:
    lane.parent = web.create_session()
    lane.pending_record = set_reminder(web, lane.parent, "remind me to stretch in 5 s")
    lane.overdue = web.create_session()
    lane.overdue_record = set_reminder(web, lane.overdue, "remind me to drink water in 2 s")
    lane.early_fork = fork(web, lane.parent)

    # Each create was answered only after its second barrier, and a fork's 201
    # only after a flush, so all of it is on disk now.
    for session_id, record in (
        (lane.parent, lane.pending_record),
        (lane.overdue, lane.overdue_record),
    ):
        stored = [e["data"] for e in changes(web.stored_log(session_id)[1:], "create")]
        assert stored == [{"version": 2, "change": "create", "record": record}]
    assert changes(web.stored_log(lane.early_fork)[1:], "create")  # inherited, not its own

    web.kill()
    killed = now_ms()
    first_due = min(lane.due_ms(lane.pending_record), lane.due_ms(lane.overdue_record))
    assert killed < first_due, "the host must die before any reminder is due (machine too slow?)"
    for session_id in (lane.parent, lane.overdue, lane.early_fork):
        assert changes(web.stored_log(session_id)[1:], "dispatch") == []


def second_life(web: WebHost, lane: Lane) -> None:
    stored = web.stored_log(lane.parent)
    with LiveFrames.open(web, lane.parent) as live:
        # Watching a cold Session says hello with the stored tail and starts nothing.
        (hello,) = live.until(lambda frames: len(frames) >= 1, "hello")
        assert hello == {"kind": "hello", "tail": len(stored) - 1}
        assert web.get(f"/api/sessions/{lane.parent}").json()["live"] is False

        resume(web, lane.parent)
        resumed = now_ms()
        # Otherwise this would be the overdue path again, not a pending recovery.
        assert resumed < lane.due_ms(lane.pending_record), "resumed after the target (too slow?)"
        resume(web, lane.early_fork)
        check_pending_fired(web, lane, live, tail=hello["tail"])

    # The overdue target passed while the host was down: wait until it is more
    # than a second late, then resume; it must fire at once, framed overdue.
    overdue_due = lane.due_ms(lane.overdue_record)
    wait_for(lambda: now_ms() >= overdue_due + 1100, what="the overdue target to be 1 s late")
    check_overdue_fired(web, lane)

    check_late_fork_inherits_receipt(web, lane)
    early = web.all_events(lane.early_fork)
    assert changes(early["events"], "dispatch") == []
    assert early["views"] == {}

    # Make the model failures durable before the next SIGKILL: the receipts must
    # outlive them.
    for session_id in (lane.parent, lane.overdue):
        wait_for(
            partial(_stored_failed_turn, web, session_id),
            what=f"the failed follow-up turn of {session_id} to be stored",
        )
    web.kill()


def third_life(web: WebHost, lane: Lane) -> None:
    # Cold history renders every stored receipt; reading it activates nothing.
    check_cold_history(web, lane.parent, {"rem-1": PENDING_PROMPT}, model_failed=True)
    check_cold_history(web, lane.overdue, {"rem-1": OVERDUE_PROMPT}, model_failed=True)
    check_cold_history(web, lane.early_fork, {})
    check_cold_history(web, lane.late_fork, {"rem-1": PENDING_PROMPT})  # inherited
    listed = web.get("/api/sessions").json()["sessions"]
    assert {row["id"] for row in listed} == set(lane.sessions)
    assert not any(row["live"] for row in listed)

    # A fork numbers its own reminders from rem-1 again.
    markers = {
        lane.parent: "rem-2",
        lane.overdue: "rem-2",
        lane.early_fork: "rem-1",
        lane.late_fork: "rem-1",
    }
    for session_id, marker_id in markers.items():
        check_no_redelivery(web, session_id, marker_id=marker_id)


# -- steps and checks ---------------------------------------------------------


def set_reminder(web: WebHost, session_id: str, text: str) -> dict[str, Any]:
    """Send `text`; the scripted reply creates one reminder; return its record."""
    response = web.post(f"/api/sessions/{session_id}/messages", {"text": text})
    assert response.status_code == 202, response.text
    page = wait_history(
        web,
        session_id,
        lambda page: any(e["type"] == "turn/end" for e in page["events"]),
        what="the reminder turn to end",
    )
    (end,) = [e for e in page["events"] if e["type"] == "turn/end"]
    assert end["data"] == {"status": "ok"}
    (create,) = changes(page["events"], "create")
    record: dict[str, Any] = create["data"]["record"]
    (result,) = [e for e in page["events"] if e["type"] == "tool/result"]
    view = result["data"]["value"]
    for key in ("id", "prompt", "rule", "timeZone", "nextAt", "revision"):
        assert view[key] == record[key], key
    assert (view["state"], view["deliveryMode"], view["delivered"]) == (
        "scheduled",
        "session-local",
        0,
    )
    return record


def fork(web: WebHost, session_id: str) -> str:
    response = web.post(f"/api/sessions/{session_id}/fork")
    assert response.status_code == 201, response.text
    child = response.json()["session"]
    assert child["live"] is True
    assert child["lineage"]["parentId"] == session_id
    return str(child["id"])


def resume(web: WebHost, session_id: str) -> None:
    response = web.post(f"/api/sessions/{session_id}/resume")
    assert response.status_code == 200, response.text
    described = web.get(f"/api/sessions/{session_id}").json()
    assert described["live"] is True
    assert described["agent"]["root"] is True
    assert set(described["agent"]["tools"]) >= SCHEDULE_TOOLS


RECEIPT_KEYS = ("scheduleId", "prompt", "occurrenceAt", "missed", "rule", "timeZone")


def receipt(record: dict[str, Any], missed: int = 0) -> dict[str, Any]:
    """What `dsh_event_view` gives a dispatch of `record` (the keys of RECEIPT_KEYS)."""
    return {
        "scheduleId": record["id"],
        "prompt": record["prompt"],
        "occurrenceAt": record["nextAt"],
        "missed": missed,
        "rule": record["rule"],
        "timeZone": record["timeZone"],
    }


def shown(view: dict[str, Any]) -> dict[str, Any]:
    """`view` cut to RECEIPT_KEYS, after checking the keys every receipt has."""
    assert view["deliveryMode"] == "session-local"
    assert isinstance(view["deliveredAt"], str)
    return {key: view[key] for key in RECEIPT_KEYS}


def _failed_turn_after_dispatch(events: list[Event]) -> bool:
    dispatches = changes(events, "dispatch")
    return bool(dispatches) and any(
        e["type"] == "turn/end" and e["seq"] > dispatches[-1]["seq"] for e in events
    )


def _receipts_shown(page: Page) -> bool:
    """Every dispatch on `page` has its receipt. A receipt shows once its dispatch is
    durable, which may be just after the turn the dispatch started has ended in memory:
    a wait for that turn must wait for the receipts too before a check reads them."""
    return all(str(e["seq"]) in page["views"] for e in changes(page["events"], "dispatch"))


def _stored_failed_turn(web: WebHost, session_id: str) -> bool:
    return _failed_turn_after_dispatch(web.stored_log(session_id)[1:])


def check_fired(page: Page, record: dict[str, Any], *, resumed_at_seq: int) -> Event:
    """The one dispatch of `record` after the resume, its frame and its receipt."""
    events = page["events"]
    (create,) = changes(events, "create")
    (dispatch,) = changes(events, "dispatch")
    assert dispatch["data"] == {
        "version": 2,
        "change": "dispatch",
        "id": record["id"],
        "occurrenceAt": record["nextAt"],
        "missed": 0,
        "recordSeq": create["seq"],
    }
    assert dispatch["seq"] > resumed_at_seq
    assert dispatch["time"] >= iso_ms(record["nextAt"]), "fired before its target"
    assert shown(page["views"][str(dispatch["seq"])]) == receipt(record)
    # Only the dispatch has a view.
    assert set(page["views"]) == {str(dispatch["seq"])}

    (message,) = [e for e in events if e["type"] == "message/user" and e["seq"] > dispatch["seq"]]
    assert message["data"]["source"] == {
        "kind": "schedule",
        "scheduleId": record["id"],
        "occurrenceAt": record["nextAt"],
        "missed": 0,
        "dispatchSeq": dispatch["seq"],
    }
    frame = ReminderFrame(message["data"]["text"])
    assert (frame.id, frame.prompt, frame.due_at, frame.missed) == (
        record["id"],
        record["prompt"],
        record["nextAt"],
        0,
    )
    frame.assert_status_matches_timing()
    return dispatch


def check_pending_fired(web: WebHost, lane: Lane, live: LiveFrames, *, tail: int) -> None:
    record = lane.pending_record
    assert record is not None
    seen_stored: list[list[dict[str, Any]]] = []

    def done(frames: list[dict[str, Any]]) -> bool:
        sidecars = [f for f in frames if f["kind"] == "event" and "sidecar" in f]
        if sidecars and not seen_stored:
            # The sidecar says "stored": the file must hold the dispatch right now.
            seen_stored.append(web.stored_log(lane.parent))
        raw = [f["event"] for f in frames if f["kind"] == "event" and "sidecar" not in f]
        return bool(sidecars) and _failed_turn_after_dispatch(raw)

    wait = (lane.due_ms(record) - now_ms()) / 1000 + 20
    frames = live.until(done, "the pending reminder's receipt on the live stream", timeout=wait)

    page = wait_history(
        web,
        lane.parent,
        lambda page: _failed_turn_after_dispatch(page["events"]) and _receipts_shown(page),
        what="the pending reminder's dispatch in history",
    )
    dispatch = check_fired(page, record, resumed_at_seq=tail)
    assert page["events"][tail]["type"] == "session/end-seed"
    (end,) = [e for e in page["events"] if e["type"] == "turn/end" and e["seq"] > dispatch["seq"]]
    assert end["data"]["status"] == "error"
    assert end["data"]["error"]["code"] == "model_unavailable"

    # Live frames: hello, every raw event once and in order, then the dispatch
    # again with its sidecar — and no sidecar for anything else.
    events = [f for f in frames if f["kind"] == "event"]
    raw = [f for f in events if "sidecar" not in f]
    assert [f["event"]["seq"] for f in raw] == list(range(tail, tail + len(raw)))
    (sidecar,) = [f for f in events if "sidecar" in f]
    assert sidecar["event"] == dispatch
    assert sidecar["sidecar"]["for"] == "event"
    assert shown(sidecar["sidecar"]["view"]) == receipt(record)
    raw_dispatch = next(f for f in raw if f["event"]["seq"] == dispatch["seq"])
    assert raw_dispatch["event"] == dispatch
    assert frames.index(raw_dispatch) < frames.index(sidecar)
    (stored_then,) = seen_stored
    assert dispatch in stored_then[1:], "the sidecar came before the dispatch was stored"


def check_overdue_fired(web: WebHost, lane: Lane) -> None:
    record = lane.overdue_record
    assert record is not None
    tail = len(web.stored_log(lane.overdue)) - 1
    resumed_at = now_ms()
    resume(web, lane.overdue)
    page = wait_history(
        web,
        lane.overdue,
        lambda page: _failed_turn_after_dispatch(page["events"]) and _receipts_shown(page),
        what="the overdue reminder's dispatch",
    )
    dispatch = check_fired(page, record, resumed_at_seq=tail)
    # Right after the resume: nothing came between the resume's end-seed and it.
    assert page["events"][tail]["type"] == "session/end-seed"
    assert dispatch["seq"] == tail + 1
    assert dispatch["time"] >= resumed_at
    message = page["events"][tail + 2]
    assert message["type"] == "message/user"
    assert ReminderFrame(message["data"]["text"]).status.startswith("overdue by ")


def check_late_fork_inherits_receipt(web: WebHost, lane: Lane) -> None:
    record = lane.pending_record
    assert record is not None
    parent = web.all_events(lane.parent)
    (dispatch,) = changes(parent["events"], "dispatch")
    assert dispatch in web.stored_log(lane.parent)[1:]
    lane.late_fork = fork(web, lane.parent)

    child = web.all_events(lane.late_fork)
    assert child["attached"] is True
    forked_at = child["header"]["lineage"]["forkedAt"]
    assert child["header"]["seedLength"] == forked_at + 1
    assert forked_at > dispatch["seq"]
    assert child["events"][:forked_at] == parent["events"][:forked_at]
    # The inherited dispatch shows the parent's receipt; nothing of its own fired.
    assert changes(child["events"], "dispatch") == [dispatch]
    assert {seq: shown(view) for seq, view in child["views"].items()} == {
        str(dispatch["seq"]): receipt(record)
    }


def check_cold_history(
    web: WebHost, session_id: str, receipts: dict[str, str], *, model_failed: bool = False
) -> None:
    described = web.get(f"/api/sessions/{session_id}").json()
    assert (described["live"], described["agent"]) == (False, None)
    page = web.all_events(session_id)
    assert page["attached"] is False
    shown = {
        view["scheduleId"]: view["prompt"]
        for seq, view in page["views"].items()
        if page["events"][int(seq)]["type"] == "schedule/change"
    }
    assert shown == receipts
    assert len(page["views"]) == len(receipts)
    for seq, view in page["views"].items():
        assert page["events"][int(seq)]["data"]["change"] == "dispatch"
        assert view["deliveryMode"] == "session-local"
    if model_failed:
        # The receipt outlived the failed model turn that followed it.
        assert _failed_turn_after_dispatch(page["events"])
    described = web.get(f"/api/sessions/{session_id}").json()
    assert (described["live"], described["agent"]) == (False, None)


def check_no_redelivery(web: WebHost, session_id: str, *, marker_id: str) -> None:
    before = web.all_events(session_id)["events"]
    old_dispatches = changes(before, "dispatch")
    resume(web, session_id)
    end_seed = len(before)
    response = web.post(f"/api/sessions/{session_id}/messages", {"text": "anything pending?"})
    assert response.status_code == 202, response.text

    def marker_turn_ended(page: Page) -> bool:
        fired = changes(page["events"], "dispatch", start=end_seed)
        # An attached page shows a receipt only once its dispatch is durable, which
        # may trail the live events the turn appended after it.
        return (
            bool(fired)
            and str(fired[-1]["seq"]) in page["views"]
            and any(
                e["type"] == "turn/end"
                and e["data"] == {"status": "ok"}
                and e["seq"] > fired[-1]["seq"]
                for e in page["events"]
            )
        )

    page = wait_history(web, session_id, marker_turn_ended, what=f"the marker of {session_id}")
    events = page["events"]
    assert events[end_seed]["type"] == "session/end-seed"
    results = [e["data"] for e in events if e["type"] == "tool/result" and e["seq"] > end_seed]
    assert [result["name"] for result in results] == ["schedule_list", "schedule_create"]
    assert results[0]["value"]["reminders"] == [], "a finished reminder is still active"
    (marker,) = changes(events, "create", start=end_seed)
    assert marker["data"]["record"]["id"] == marker_id
    # The owner ran past the marker's target: anything earlier and still active
    # would have fired first. Only the marker did.
    (fired,) = changes(events, "dispatch", start=end_seed)
    assert fired["data"]["id"] == marker_id
    assert fired["time"] >= iso_ms(marker["data"]["record"]["nextAt"])
    assert changes(events, "dispatch") == [*old_dispatches, fired]
    assert shown(page["views"][str(fired["seq"])]) == receipt(marker["data"]["record"])


def check_stored_logs(data: Path, lane: Lane) -> None:
    """One durable dispatch per reminder, in the Session that owns it, across every life."""
    files = {path.stem: path for path in (data / "sessions").glob("*.jsonl")}
    assert set(files) == set(lane.sessions)
    owned: dict[str, Counter[str]] = {}
    for session_id, path in files.items():
        stored = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        own = own_events(stored)
        created = [e["data"]["record"]["id"] for e in changes(own, "create")]
        dispatched = Counter(e["data"]["id"] for e in changes(own, "dispatch"))
        assert dispatched == Counter(created), (session_id, created, dispatched)
        owned[session_id] = dispatched
        inherited = [e for e in stored[1:] if e not in own]
        expected_inherited = ["rem-1"] if session_id == lane.late_fork else []
        assert [e["data"]["id"] for e in changes(inherited, "dispatch")] == expected_inherited
    assert owned == {
        lane.parent: Counter({"rem-1": 1, "rem-2": 1}),
        lane.overdue: Counter({"rem-1": 1, "rem-2": 1}),
        lane.early_fork: Counter({"rem-1": 1}),  # its marker only
        lane.late_fork: Counter({"rem-1": 1}),  # its marker only
    }


# -- protocol v2 across a SIGKILL: a time in a zone, a recurring reminder ----------------------

ZONE = "Asia/Kolkata"
ZONED_PROMPT = "call home — 打电话"
RECURRING_PROMPT = "drink water"
EVERY = 3
EVERY_COUNT = 3
ZONED_LEAD = 25  # seconds from the first life to the zoned reminder: it fires in the second
RECURRING_LEAD = 8  # seconds to the recurring reminder's first occurrence: after the SIGKILL


def lane_overlay(folder: Path) -> Path:
    """`overlays/web-schedule` with `min_interval_seconds` lowered so a lane can wait seconds."""
    folder.mkdir()
    shipped = (OVERLAY / "overlay.toml").read_text(encoding="utf-8")
    marker = "[plugins.tool-schedule]\n"
    assert marker in shipped
    (folder / "overlay.toml").write_text(
        shipped.replace(marker, marker + "min_interval_seconds = 1\n"), encoding="utf-8"
    )
    return folder


def local_wall(epoch_ms: int, zone: str) -> str:
    """`YYYY-MM-DDTHH:MM:SS` of `epoch_ms` in `zone`, rounded up to a whole second."""
    moment = datetime.fromtimestamp(-(-epoch_ms // 1000), ZoneInfo(zone))
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def test_a_zoned_time_and_a_recurring_reminder_cross_sigkill(
    install: Install, tmp_path: Path
) -> None:
    overlay = lane_overlay(tmp_path / "overlay")
    start = now_ms()
    zoned_at = local_wall(start + ZONED_LEAD * 1000, ZONE)
    first_at = datetime.fromtimestamp(-(-(start + RECURRING_LEAD * 1000) // 1000), UTC)
    recurring_at = first_at.strftime("%Y-%m-%dT%H:%M:%SZ")  # an explicit offset wins
    creates = [
        {
            "toolCalls": [
                {
                    "name": "schedule_create",
                    "arguments": {"prompt": ZONED_PROMPT, "at": zoned_at, "time_zone": ZONE},
                }
            ]
        },
        {"text": "Set."},
        {
            "toolCalls": [
                {
                    "name": "schedule_create",
                    "arguments": {
                        "prompt": RECURRING_PROMPT,
                        "every_seconds": EVERY,
                        "at": recurring_at,
                        "count": EVERY_COUNT,
                    },
                }
            ]
        },
        {"text": "Set."},
    ]
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    first = _script(scripts / "first.json", creates)
    second = _script(scripts / "second.json", [])  # every follow-up turn fails
    with install.web(tmp_path / "data", overlay=overlay, model=f"scripted:{first}") as web:
        zoned = web.create_session()
        zoned_record = set_reminder(web, zoned, "call home at that time in Kolkata")
        assert zoned_record["rule"] == {"kind": "at", "at": zoned_at}
        assert zoned_record["timeZone"] == ZONE
        assert abs(iso_ms(zoned_record["nextAt"]) - (start + ZONED_LEAD * 1000)) < 1000
        recurring = web.create_session()
        record = set_reminder(web, recurring, "every three seconds, three times")
        assert record["rule"] == {"kind": "every", "seconds": EVERY, "at": recurring_at}
        assert record["nextAt"] == first_at.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        web.kill()
        assert now_ms() < iso_ms(record["nextAt"]), "killed after the first occurrence (slow?)"

        # Cold through at least two occurrences of the recurring reminder.
        first_ms = iso_ms(record["nextAt"])
        wait_for(
            lambda: now_ms() >= first_ms + 2 * EVERY * 1000 + 500,
            timeout=60,
            what="two occurrences to pass while the host is down",
        )
        web.model = f"scripted:{second}"
        web.boot()
        resume(web, zoned)
        assert now_ms() < iso_ms(zoned_record["nextAt"]), "resumed after the zoned target (slow?)"
        resumed_at = now_ms()
        resume(web, recurring)
        check_recurring_caught_up(web, recurring, record, resumed_at)
        check_zoned_fired(web, zoned, zoned_record)
        web.kill()

    # What is stored: one dispatch per delivered occurrence, no more.
    data = tmp_path / "data" / "sessions"
    zoned_log = [
        json.loads(line) for line in (data / f"{zoned}.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(changes(zoned_log[1:], "dispatch")) == 1
    recurring_log = [
        json.loads(line) for line in (data / f"{recurring}.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(changes(recurring_log[1:], "dispatch")) == EVERY_COUNT


def check_recurring_caught_up(
    web: WebHost, session_id: str, record: dict[str, Any], resumed_at: int
) -> None:
    """One catch-up (the latest missed occurrence, saying how many), then on schedule."""
    first_ms = iso_ms(record["nextAt"])
    page = wait_history(
        web,
        session_id,
        lambda page: (
            len(changes(page["events"], "dispatch")) == EVERY_COUNT
            and page["events"][-1]["type"] == "turn/end"
            and _receipts_shown(page)
        ),
        what="the catch-up and the occurrences after it, with their receipts",
        timeout=30,
    )
    dispatches = changes(page["events"], "dispatch")
    occurrences = [iso_ms(event["data"]["occurrenceAt"]) for event in dispatches]
    missed = [event["data"]["missed"] for event in dispatches]
    catch_up = occurrences[0]
    # The catch-up is the latest occurrence before the resume, standing for the earlier ones.
    assert catch_up <= resumed_at < catch_up + EVERY * 1000 + 1000
    assert missed[0] == (catch_up - first_ms) // (EVERY * 1000) >= 2
    # Then back on schedule: the next occurrences of the same series, none missed.
    assert occurrences[1:] == [catch_up + EVERY * 1000, catch_up + 2 * EVERY * 1000]
    assert missed[1:] == [0, 0]
    for event, occurrence in zip(dispatches, occurrences, strict=True):
        assert event["time"] >= occurrence, "delivered before its occurrence"
    messages = [
        e
        for e in page["events"]
        if e["type"] == "message/user" and e["data"]["source"]["kind"] == "schedule"
    ]
    frames = [ReminderFrame(message["data"]["text"]) for message in messages]
    assert [frame.missed for frame in frames] == missed
    for frame in frames:
        frame.assert_status_matches_timing()
        assert frame.rule.startswith(f"every {EVERY} seconds")
    assert frames[-1].next == "none (this was the last occurrence)"
    views = [shown(page["views"][str(event["seq"])]) for event in dispatches]
    assert [view["missed"] for view in views] == missed


def check_zoned_fired(web: WebHost, session_id: str, record: dict[str, Any]) -> None:
    """The `at` reminder fires once, at its instant, framed in its zone and in UTC."""
    page = wait_history(
        web,
        session_id,
        lambda page: (
            bool(changes(page["events"], "dispatch"))
            and page["events"][-1]["type"] == "turn/end"
            and _receipts_shown(page)
        ),
        what="the zoned reminder and its receipt",
        timeout=ZONED_LEAD + 20,
    )
    (dispatch,) = changes(page["events"], "dispatch")
    assert dispatch["data"]["occurrenceAt"] == record["nextAt"]
    assert dispatch["time"] >= iso_ms(record["nextAt"])
    (message,) = [
        e
        for e in page["events"]
        if e["type"] == "message/user" and e["data"]["source"]["kind"] == "schedule"
    ]
    frame = ReminderFrame(message["data"]["text"])
    assert frame.prompt == ZONED_PROMPT
    assert frame.occurrence_local.endswith(f"+05:30 ({ZONE})")
    assert frame.occurrence_at == record["nextAt"]
    frame.assert_status_matches_timing()
    view = shown(page["views"][str(dispatch["seq"])])
    assert view == receipt(record)
