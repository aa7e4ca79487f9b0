"""Whole-host crash rounds: `dsh web` SIGKILLed at random moments, then checked from disk.

One data directory lives through every round. A round boots the real `dsh
web` (web-schedule overlay, demo model), checks that the restarted host lists
every acknowledged Session, drives a random workload (`CrashClient`) and
SIGKILLs the process at a random moment: anywhere in the round, around the
moment a reminder it just requested falls due, or right after resuming a
Session whose overdue reminders fire at once. Then, with the process dead,
everything the client was told must be backed by storage:

- every log parses with the JSONL backend (a torn tail only as the last line);
- a 201 (new or forked Session) → its log exists with that header (a fork's
  lineage names its parent);
- a sidecar received over the WebSocket → the event it decorates is stored,
  and so is every event the client saw before it on that stream, unchanged;
- a reminder tool result the client saw (stream or history) → what it
  reports (the create, the delete, every listed reminder) is stored, because
  the tool answered only after its barrier;
- a view in a history page → that event is stored;
- every stored schedule log folds without error.

Some rounds also leave half a line at the end of a random log after the kill
(power loss during an append cannot be produced by SIGKILL alone); the next
host must read around it and truncate it before it appends.

After the last round every Session is resumed and the rounds wait until each
reminder is finished: no create may stay active (lost) once its Session is
live past its target. The same rounds run again on `overlays/web-schedule-wake`
(the wake index on; after some kills the index file is deleted or left with
half a line), and there the last boot resumes nothing: the index alone must
wake every Session that has a reminder left, and every one must be delivered.
Queued messages (202) that never became a stored
`message/user` are counted separately (a 202 means queued, DESIGN §9), and so
are duplicates: a reminder frame the client saw whose dispatch did not reach
storage and that was therefore delivered again (the at-least-once window).

A reminder's turn is never lost: at the end, every stored dispatch has
exactly one stored follow-up naming it (`source.dispatchSeq`) — a follow-up
that died with a process was queued again by the next resume or wake — and
the turns the model answered are counted per follow-up (a kill can still land
between a stored follow-up and the model's answer; that turn is counted as
cut, never run again).
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Collection
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from dsh.persistence import StoredSession
from dsh.session.event import SessionEvent
from dsh.session.types import END_SEED
from dsh_tool_schedule import decode_change
from tests.support.deadlines import WAIT
from tests.support.webhost import REPO, WebHost, wait_for

from .crash_client import CrashClient, Killer, Page
from .figures import Figures
from .live_watch import LiveWatch
from .stored import (
    DataDir,
    carried_reminders,
    followups_of,
    own_events,
    read_data_dir,
    reminder_messages,
    schedule_changes,
)

pytestmark = [pytest.mark.reliability, pytest.mark.crash]

log = logging.getLogger("dsh.reliability.crash")

ROUNDS = 30
WAKE_ROUNDS = 15
WAKE_OVERLAY = REPO / "overlays" / "web-schedule-wake"
MAX_SESSIONS = 24
RECEIPT_WAIT = 10.0
TEAR_CHANCE = 0.2
POLICIES = (("random", 0.4), ("at-due", 0.35), ("after-resume", 0.25))
# Reported even when zero: these are the figures the README quotes.
REPORTED = (
    "acknowledgements_broken",
    "reminders_lost",
    "duplicate_deliveries_visible",
    "duplicate_deliveries_stored",
    "dispatches_without_stored_followup",
    "followups_stored_twice",
    "followups_queued_again",
    "followup_turns_answered",
    "followup_turns_cut_by_kill",
    "messages_queued_never_stored",
    "fork_seeds_not_in_parent_log",
    "torn_tails_injected",
    "http_5xx",
)
COUNTED = {
    "create": "reminders_created",
    "delete": "reminders_deleted",
    "dispatch": "reminders_dispatched",
}


def dumped(event: SessionEvent) -> dict[str, Any]:
    return event.to_dict()


class Verifier:
    """Checks one crashed data directory against the client's ledger; collects violations."""

    def __init__(self, client: CrashClient, data: DataDir, counters: Counter[str]) -> None:
        self.client = client
        self.data = data
        self.counters = counters
        self.violations: list[str] = []

    def fail(self, message: str) -> None:
        self.violations.append(f"round {self.client.round}: {message}")

    def stored_event(self, session_id: str, seq: int) -> dict[str, Any] | None:
        stored = self.data.sessions.get(session_id)
        if stored is None or seq >= len(stored.events):
            return None
        return dumped(stored.events[seq])

    def all(self) -> list[str]:
        self.acknowledged_sessions()
        for watch in self.client.round_watches():
            self.stream(watch)
        for page in self.client.round_pages():
            self.page(page)
        for session_id in self.data.sessions:
            error = self.data.fold(session_id).error
            if error is not None:
                self.fail(f"{session_id}: the stored schedule log is invalid: {error}")
        self.counters["logs_inspected"] += len(self.data.sessions)
        return self.violations

    def acknowledged_sessions(self) -> None:
        for session_id, acked in self.client.acked.items():
            stored = self.data.sessions.get(session_id)
            if stored is None:
                self.fail(f"{session_id} was answered 201 ({acked.kind}) but is not stored")
                continue
            lineage = stored.header.lineage
            if acked.kind == "fork" and (lineage is None or lineage.parent_id != acked.parent):
                self.fail(f"fork {session_id} is stored with lineage {lineage}")
            self.counters["acknowledged_sessions_verified"] += 1

    def stream(self, watch: LiveWatch) -> None:
        seen = {event["seq"]: event for event in watch.events()}
        for event, _view in watch.sidecars():
            seq = event["seq"]
            if self.stored_event(watch.session_id, seq) != event:
                self.fail(f"{watch.session_id}: sidecar for seq {seq} but that event is not stored")
                continue
            for earlier, shown in seen.items():
                if earlier <= seq and self.stored_event(watch.session_id, earlier) != shown:
                    self.fail(
                        f"{watch.session_id}: seq {earlier} was shown before the sidecar of "
                        f"seq {seq} but is stored differently"
                    )
            self.counters["sidecars_verified"] += 1
        for event in seen.values():
            self.tool_result(watch.session_id, event)

    def page(self, page: Page) -> None:
        events = {event["seq"]: event for event in page.body["events"]}
        for seq_text in page.body["views"]:
            seq = int(seq_text)
            if self.stored_event(page.session_id, seq) != events[seq]:
                self.fail(f"{page.session_id}: history showed a view for seq {seq}, not stored")
            self.counters["history_views_verified"] += 1
        for event in events.values():
            self.tool_result(page.session_id, event)

    def tool_result(self, session_id: str, event: dict[str, Any]) -> None:
        """A schedule tool's success is backed by the events it reports."""
        data = event["data"]
        if event["type"] != "tool/result" or not isinstance(data, dict) or "value" not in data:
            return
        value, name = data["value"], data.get("name")
        stored = self.data.sessions.get(session_id)
        if stored is None or name not in ("schedule_create", "schedule_delete", "schedule_list"):
            return
        if event["seq"] < (stored.header.seed_length or 0):
            return  # inherited by a fork: the parent's answer, backed by the parent's log
        creates: dict[str, dict[str, Any]] = {}
        deletes: set[str] = set()
        for _seq, change in schedule_changes(own_events(stored)):
            if change.get("change") == "create":
                creates[change["record"]["id"]] = change["record"]
            elif change.get("change") == "delete":
                deletes.add(change["id"])
        if name == "schedule_create":
            record = creates.get(value["id"])
            shown = ("id", "prompt", "rule", "timeZone", "nextAt", "revision")  # view ⊇ record
            if record is None or any(record[key] != value[key] for key in shown):
                self.fail(f"{session_id}: schedule_create answered {value}, not stored")
        elif name == "schedule_delete" and value.get("deleted") is True:
            if value["id"] not in deletes:
                self.fail(f"{session_id}: schedule_delete answered {value['id']}, not stored")
        elif name == "schedule_list":
            for view in value["reminders"]:
                if view["id"] not in creates:
                    self.fail(f"{session_id}: schedule_list showed {view['id']}, not stored")
        self.counters["tool_results_verified"] += 1


def check_restarted(web: WebHost, client: CrashClient, rng: random.Random) -> None:
    """The restarted host lists every acknowledged Session and reads their history."""
    listed = web.get("/api/sessions")
    assert listed.status_code == 200, listed.text
    ids = {row["id"] for row in listed.json()["sessions"]}
    missing = set(client.acked) - ids
    assert not missing, f"acknowledged Sessions missing after restart: {missing}"
    for session_id in rng.sample(sorted(ids), min(3, len(ids))):
        page = web.get(f"/api/sessions/{session_id}/events?limit=500")
        assert page.status_code == 200, page.text


def crash_round(
    web: WebHost, client: CrashClient, number: int, rng: random.Random, counters: Counter[str]
) -> None:
    web.boot()
    counters["boots"] += 1
    check_restarted(web, client, rng)
    killer = Killer(web)
    policy = rng.choices([name for name, _ in POLICIES], [weight for _, weight in POLICIES])[0]
    client.begin_round(number, killer, policy)
    killer.arm(rng.uniform(0.3, 3.0), "random")
    if policy == "after-resume":
        client.run_first(client.resume)  # overdue reminders fire right after a resume
    client.run_operations(rng.randint(2, 8))
    wait_for(lambda: killer.fired.is_set(), timeout=15, what="the SIGKILL of this round")
    assert web.process is not None
    wait_for(lambda: web.process is not None and web.process.poll() is not None, timeout=10)
    counters[f"kills_{killer.reason}"] += 1
    counters["kills"] += 1
    for watch in client.round_watches():
        watch.join()
    output = "".join(web.output)
    assert "Traceback" not in output, output
    data = read_data_dir(web.data_dir)
    counters["torn_tail_observations"] += data.torn_tails
    violations = Verifier(client, data, counters).all()
    counters["acknowledgements_broken"] += len(violations)
    assert not violations, "\n".join(violations)
    client.learn_reminder_ids()
    listed = sorted(set(data.sessions) - data.trashed)
    if listed and rng.random() < TEAR_CHANCE:
        tear(web.data_dir, rng.choice(listed), len(data.sessions), rng)
        counters["torn_tails_injected"] += 1


def tear(data_dir: Path, session_id: str, salt: int, rng: random.Random) -> None:
    """Leave half a line at the end of a log, as power loss during an append would."""
    path = data_dir / "sessions" / f"{session_id}.jsonl"
    line = b'{"seq":' + str(10_000 + salt).encode() + b',"type":"message/user","time":1,"data":{"te'
    with path.open("ab") as handle:
        handle.write(line[: rng.randint(1, len(line))])


def final_lifecycle_start(events: tuple[SessionEvent, ...]) -> int:
    return max((event.seq for event in events if event.type == END_SEED), default=0)


def all_reminders_finished(web: WebHost) -> DataDir | None:
    """The data dir once no Session has an active reminder and every dispatch it owns has
    its stored follow-up (one lost with a process is queued again at the resume or wake),
    answered by the model when this last host stored it; None until then."""
    data = read_data_dir(web.data_dir)
    for session_id, stored in data.sessions.items():
        if data.fold(session_id).reminders():
            return None
        own = own_events(stored)
        start = final_lifecycle_start(stored.events)
        followups = followups_of(own)
        for seq, change in schedule_changes(own):
            if change.get("change") != "dispatch":
                continue
            messages = followups.stored.get(seq)
            if messages is None:
                return None
            if messages[0] > start and messages[0] not in followups.answered:
                return None
    return data


def shown_then_lost(stored: StoredSession, watches: list[LiveWatch]) -> Counter[str]:
    """Reminder frames (`message/user` from the plugin) a client was shown over the live
    stream that storage does not hold at that seq: delivered once, then lost to a crash."""
    ghosts: Counter[str] = Counter()
    for watch in watches:
        for event in watch.events():
            data = event["data"]
            seq = event["seq"]
            if event["type"] != "message/user" or not isinstance(data, dict):
                continue
            if seq < len(stored.events) and dumped(stored.events[seq]) == event:
                continue
            ghosts.update(carried_reminders(data.get("source")))
    return ghosts


def account_reminders(client: CrashClient, data: DataDir, counters: Counter[str]) -> list[str]:
    """Reminders created, finished and lost; duplicate deliveries (at-least-once)."""
    problems: list[str] = []
    for session_id, stored in data.sessions.items():
        own = own_events(stored)
        active = data.fold(session_id).reminders()
        if active:
            problems.append(f"{session_id}: reminders never delivered: {active}")
            counters["reminders_lost"] += len(active)
        dispatched: set[str] = set()
        for _seq, change in schedule_changes(own):
            decoded = decode_change(change)
            counters[COUNTED[decoded.change]] += 1
            if decoded.change == "dispatch":
                dispatched.add(change["id"])
        stored_messages = Counter(rid for _seq, rid in reminder_messages(own))
        watches = [watch for watch in client.watches if watch.session_id == session_id]
        ghosts = shown_then_lost(stored, watches)
        for rid in dispatched | set(ghosts):
            deliveries = stored_messages[rid] + ghosts[rid]
            counters["duplicate_deliveries_visible"] += max(0, deliveries - 1)
            counters["duplicate_deliveries_stored"] += max(0, stored_messages[rid] - 1)
            counters["reminder_frames_shown_then_lost"] += ghosts[rid]
        problems += account_followups(session_id, own, counters)
    return problems


def account_followups(
    session_id: str, own: tuple[SessionEvent, ...], counters: Counter[str]
) -> list[str]:
    """Per dispatch: exactly one stored follow-up names it; and whether its turn was answered."""
    problems: list[str] = []
    followups = followups_of(own)
    counters["followups_queued_again"] += followups.requeued
    for seq, change in schedule_changes(own):
        if change.get("change") != "dispatch":
            continue
        stored = followups.stored.get(seq, [])
        if not stored:
            counters["dispatches_without_stored_followup"] += 1
            problems.append(f"{session_id}: the dispatch at seq {seq} has no stored follow-up")
        elif len(stored) > 1:
            counters["followups_stored_twice"] += len(stored) - 1
            problems.append(f"{session_id}: the dispatch at seq {seq} has follow-ups {stored}")
        for message in stored[:1]:
            answered = message in followups.answered
            counters["followup_turns_answered" if answered else "followup_turns_cut_by_kill"] += 1
    return problems


def account_forks(client: CrashClient, data: DataDir, counters: Counter[str]) -> None:
    """How many fork seeds are not (or no longer) the parent's stored prefix."""
    for session_id, acked in client.acked.items():
        if acked.kind != "fork" or acked.parent is None:
            continue
        child, parent = data.sessions[session_id], data.sessions[acked.parent]
        lineage = child.header.lineage
        assert lineage is not None
        seed = [dumped(event) for event in child.events[: lineage.forked_at]]
        if seed != [dumped(event) for event in parent.events[: lineage.forked_at]]:
            # A fork of a live parent copies its not-yet-durable suffix (see the report).
            counters["fork_seeds_not_in_parent_log"] += 1
        counters["forks_checked"] += 1


def account_messages(client: CrashClient, data: DataDir, counters: Counter[str]) -> None:
    """Messages answered 202 (queued) against the `message/user` events stored for them."""
    for (session_id, text), count in client.queued.items():
        kept = sum(
            1
            for event in own_events(data.sessions[session_id])
            if event.type == "message/user"
            and isinstance(event.data, dict)
            and event.data.get("text") == text
            and event.data.get("source") == {"kind": "user"}
        )
        counters["messages_queued"] += count
        counters["messages_stored"] += min(kept, count)
        counters["messages_queued_never_stored"] += max(0, count - kept)


def shown_receipts(web: WebHost, session_id: str, seqs: Collection[int]) -> dict[str, Any] | None:
    """The views of `session_id`'s history once every seq in `seqs` has one; else None."""
    views: dict[str, Any] = web.all_events(session_id)["views"]
    return views if all(str(seq) in views for seq in seqs) else None


def check_receipts(web: WebHost, data: DataDir, counters: Counter[str]) -> list[str]:
    """Every stored dispatch a Session owns has its receipt view in history.

    The Sessions are live, and a live page shows a receipt only once the write path
    confirmed its dispatch, which trails the file (a line is there before its fsync
    returns): each history is read until every dispatch in the file has its view, or
    `RECEIPT_WAIT` seconds passed.
    """
    problems: list[str] = []
    for session_id, stored in data.sessions.items():
        dispatched = {
            seq: change["id"]
            for seq, change in schedule_changes(own_events(stored))
            if change.get("change") == "dispatch"
        }
        probe = partial(shown_receipts, web, session_id, dispatched)
        try:
            views = wait_for(probe, timeout=RECEIPT_WAIT, what=f"the receipts of {session_id}")
        except TimeoutError:
            views = web.all_events(session_id)["views"]  # report each one missing
        for seq, schedule_id in dispatched.items():
            view = views.get(str(seq))
            if view is None or view["scheduleId"] != schedule_id:
                problems.append(f"{session_id}: dispatch at seq {seq} has no receipt ({view})")
            counters["receipts_verified"] += 1
    return problems


def test_acknowledged_state_survives_sigkill_at_random_moments_and_no_reminder_is_lost(
    tmp_path: Path, rng: random.Random, seed: int, scale: int, figures: Figures
) -> None:
    web = WebHost(data_dir=tmp_path / "data", model="demo")
    run_crash_rounds(web, rng, seed, figures, section="crash", rounds=ROUNDS * scale, scale=scale)


def test_with_wake_every_reminder_fires_after_sigkills_without_resuming_any_session(
    tmp_path: Path, rng: random.Random, seed: int, scale: int, figures: Figures
) -> None:
    """The same rounds on `overlays/web-schedule-wake`, some with the wake index deleted or
    torn after the kill; at the end nobody resumes anything: the index wakes every Session."""
    web = WebHost(data_dir=tmp_path / "data", overlay=WAKE_OVERLAY, model="demo")
    run_crash_rounds(
        web,
        rng,
        seed,
        figures,
        section="crash_wake",
        rounds=WAKE_ROUNDS * scale,
        scale=scale,
        wake=True,
    )


def damage_index(data_dir: Path, rng: random.Random, counters: Counter[str]) -> None:
    """Sometimes delete the wake index, or leave half a line at its end (rebuilt or read around)."""
    index = data_dir / "wake-index.jsonl"
    luck = rng.random()
    if luck < 0.15 and index.exists():
        index.unlink()
        counters["wake_index_deleted"] += 1
    elif luck < 0.3 and index.exists():
        with index.open("ab") as handle:
            handle.write(b'{"id":"x","wakeAt":17')
        counters["wake_index_torn"] += 1


def run_crash_rounds(
    web: WebHost,
    rng: random.Random,
    seed: int,
    figures: Figures,
    *,
    section: str,
    rounds: int,
    scale: int,
    wake: bool = False,
) -> None:
    started = time.monotonic()
    counters: Counter[str] = Counter({key: 0 for key in REPORTED})
    client = CrashClient(web, rng, max_sessions=MAX_SESSIONS * scale)
    try:
        for number in range(1, rounds + 1):
            crash_round(web, client, number, rng, counters)
            if wake:
                damage_index(web.data_dir, rng, counters)
        counters["rounds"] = rounds
        torn_before = read_data_dir(web.data_dir).torn_tails
        web.boot()
        counters["boots"] += 1
        check_restarted(web, client, rng)
        if not wake:
            for session_id in sorted(read_data_dir(web.data_dir).sessions):
                response = web.post(f"/api/sessions/{session_id}/resume")
                assert response.status_code == 200, response.text
                counters["final_resumes"] += 1
        # A bound on a failure, not a speed: with both cores busy (the parallel run starts
        # the two crash tests, the lanes and the browser scenarios side by side) waking every
        # Session with a due reminder and running its follow-up turn took over 60 s once and
        # over 120 s once (2026-12-04; 33 s with the same seed under the same load again).
        wait_for(
            lambda: all_reminders_finished(web),
            timeout=6 * WAIT if wake else 2 * WAIT,
            interval=0.1,
            what="every reminder to be delivered",
        )
        receipt_problems = check_receipts(web, read_data_dir(web.data_dir), counters)
        assert web.terminate() == 0
        final = read_data_dir(web.data_dir)
        # Every log the last host wrote lost its torn tail; with wake, a Session that was
        # never made live again keeps one (readers ignore it; its next writer truncates it).
        assert final.torn_tails <= (torn_before if wake else 0), "a graceful stop tore a log"
        counters["torn_tails_left_unopened"] = final.torn_tails
        problems = account_reminders(client, final, counters) + receipt_problems
        account_forks(client, final, counters)
        account_messages(client, final, counters)
        counters["sessions_stored"] = len(final.sessions)
        counters["leftover_temp_files"] = final.leftover_temp_files
        counters.update(client.counters)
        assert counters["http_5xx"] == 0, client.statuses
        assert not problems, "\n".join(problems)
    finally:
        web.stop()
        figure = figures.section(section)
        figure.update(sorted(counters.items()))
        figure["statuses"] = dict(sorted(client.statuses.items()))
        figure["seconds"] = round(time.monotonic() - started, 1)
        log.warning("%s rounds (seed %d): %s", section, seed, dict(sorted(counters.items())))
