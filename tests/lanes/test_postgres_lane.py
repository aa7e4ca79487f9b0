"""Several `dsh web` processes on one PostgreSQL database (issue 18, phase A).

Real processes, a real server: one host creates and talks to a Session;
another lists it and reads its history from the database, and is refused
while the first owns it; SIGKILL the owner mid-conversation and the other
takes the Session over once its lease expires, with everything the dead host
acknowledged stored, and continues the conversation. The lease timing is
short here (`[store]` in the overlay) so the lane runs in seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lanes.observe import changes, iso_ms, now_ms
from tests.support.postgres import PostgresServer
from tests.support.webhost import REPO, WebHost, wait_for

pytestmark = [pytest.mark.lane, pytest.mark.pg, pytest.mark.crash]

TTL = 2.0
RENEW = 0.5


@pytest.fixture
def overlay(tmp_path: Path) -> Path:
    path = tmp_path / "overlay.toml"
    path.write_text(
        f"[store]\nlease_ttl_seconds = {TTL}\nlease_renew_seconds = {RENEW}\n", encoding="utf-8"
    )
    return path


@pytest.fixture
def hosts(tmp_path: Path, pg_url: str, overlay: Path) -> Iterator[list[WebHost]]:
    started: list[WebHost] = []
    try:
        for name in ("a", "b", "c"):
            web = WebHost(
                data_dir=tmp_path / name,
                overlay=overlay,
                model="demo",
                extra_args=["--store", pg_url],
            )
            web.boot()
            started.append(web)
        yield started
    finally:
        for web in started:
            web.stop()


def types(page: dict[str, Any]) -> list[str]:
    return [event["type"] for event in page["events"]]


def replied(web: WebHost, session_id: str, count: int) -> dict[str, Any] | None:
    page = web.all_events(session_id)
    return page if types(page).count("turn/end") >= count else None


def test_hosts_share_sessions_one_owner_at_a_time_and_a_survivor_takes_over(
    hosts: list[WebHost],
) -> None:
    a, b, c = hosts
    session_id = a.create_session()
    assert a.post(f"/api/sessions/{session_id}/messages", {"text": "hello"}).status_code == 202
    on_a = wait_for(lambda: replied(a, session_id, 1), what="the demo model's reply on A")

    # B and C see it: in the list and in history, read from the database.
    listed = {row["id"]: row for row in b.get("/api/sessions").json()["sessions"]}
    assert listed[session_id]["length"] == len(on_a["events"])
    assert c.all_events(session_id)["events"] == on_a["events"]
    # … but A owns it while it is live there.
    refused = b.post(f"/api/sessions/{session_id}/resume")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "session_live_elsewhere"

    assert a.post(f"/api/sessions/{session_id}/messages", {"text": "again"}).status_code == 202
    wait_for(lambda: replied(a, session_id, 2), what="the second reply on A")
    acknowledged = a.all_events(session_id)["events"]
    a.kill()  # mid-conversation: no chance to release anything
    killed_at = time.monotonic()

    def taken() -> bool:
        return b.post(f"/api/sessions/{session_id}/resume").status_code == 200

    wait_for(taken, timeout=TTL + 10, interval=0.05, what="B to take the Session over")
    takeover = time.monotonic() - killed_at
    assert takeover <= TTL + 2, f"takeover took {takeover:.2f} s with a {TTL} s TTL"
    on_b = b.all_events(session_id)["events"]
    assert on_b[: len(acknowledged)] == acknowledged  # nothing acknowledged is lost
    assert types({"events": on_b[len(acknowledged) :]}) == ["session/end-seed"]

    assert (
        b.post(f"/api/sessions/{session_id}/messages", {"text": "still there?"}).status_code == 202
    )
    final = wait_for(lambda: replied(b, session_id, 3), what="B to continue the conversation")
    assert c.all_events(session_id)["events"] == final["events"]
    assert c.post(f"/api/sessions/{session_id}/resume").status_code == 409


def test_a_partitioned_host_gives_its_sessions_up_before_another_may_take_them(
    tmp_path: Path, pg_url: str, overlay: Path, postgres: PostgresServer
) -> None:
    role = f"part_{tmp_path.name[-8:].lower().replace('-', '_')}"
    postgres.psql(f"CREATE ROLE {role} LOGIN SUPERUSER")
    cut_url = pg_url.replace("postgresql://dsh@", f"postgresql://{role}@", 1)
    with (
        WebHost.start(tmp_path / "b", overlay=overlay, extra_args=["--store", pg_url]) as b,
        WebHost.start(
            tmp_path / "c", overlay=overlay, extra_args=["--store", cut_url, "--stop-grace", "0"]
        ) as c,
    ):
        session_id = c.create_session()
        # C's connections die and it cannot connect again: a network partition.
        postgres.psql(
            f"ALTER ROLE {role} NOLOGIN; "
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'"
        )
        cut_at = time.monotonic()
        gave_up: float | None = None
        taken: float | None = None
        while taken is None and time.monotonic() - cut_at < TTL + 10:
            if gave_up is None and any("this host lost it" in line for line in c.output):
                gave_up = time.monotonic()
            if b.post(f"/api/sessions/{session_id}/resume").status_code == 200:
                taken = time.monotonic()
            time.sleep(0.02)
        assert gave_up is not None and taken is not None, "".join(c.output)
        assert gave_up < taken  # C stopped before B could take over
        posted = c.post(f"/api/sessions/{session_id}/messages", {"text": "from the cut host"})
        assert posted.status_code in (409, 503)  # C cannot make it live, nor store it
        texts = [event["data"].get("text") for event in b.all_events(session_id)["events"]]
        assert "from the cut host" not in texts


WAKE_PLUGINS = (REPO / "overlays" / "web-schedule-wake" / "overlay.toml").read_text(
    encoding="utf-8"
)
DUE_IN = 8  # seconds: after the kill, the takeover (TTL + a sweep) and before the time


def wake_overlay(tmp_path: Path) -> Path:
    """The wake overlay (schedule plugins, wake_cold_sessions) with the short leases."""
    path = tmp_path / "wake-overlay.toml"
    text = WAKE_PLUGINS.replace(
        "[host]\n",
        f"[store]\nlease_ttl_seconds = {TTL}\nlease_renew_seconds = {RENEW}\n\n[host]\n",
        1,
    )
    path.write_text(text, encoding="utf-8")
    return path


def remind_script(tmp_path: Path, prompt: str, seconds: int) -> str:
    script = tmp_path / f"remind-{prompt.replace(' ', '-')}.json"
    arguments = {"prompt": prompt, "after_seconds": seconds}
    script.write_text(
        json.dumps(
            [
                {"toolCalls": [{"name": "schedule_create", "arguments": arguments}]},
                {"text": f"Set: {prompt}."},
            ]
        ),
        encoding="utf-8",
    )
    return f"scripted:{script}"


def created_reminder(web: WebHost, session_id: str) -> dict[str, Any] | None:
    events = web.all_events(session_id)["events"]
    if not any(event["type"] == "turn/end" for event in events):
        return None
    (create,) = changes(events, "create")
    record: dict[str, Any] = create["data"]["record"]
    return record


def test_a_survivor_delivers_a_killed_hosts_reminder_once_after_its_lease_expires(
    tmp_path: Path, pg_url: str
) -> None:
    overlay = wake_overlay(tmp_path)
    a = WebHost(
        data_dir=tmp_path / "a",
        overlay=overlay,
        model=remind_script(tmp_path, "drink water", DUE_IN),
        extra_args=["--store", pg_url],
    )
    b = WebHost(data_dir=tmp_path / "b", overlay=overlay, extra_args=["--store", pg_url])
    try:
        a.boot()
        b.boot()
        session_id = a.create_session()
        posted = a.post(f"/api/sessions/{session_id}/messages", {"text": "remind me"})
        assert posted.status_code == 202
        record = wait_for(lambda: created_reminder(a, session_id), what="the reminder on A")
        due_ms = iso_ms(record["nextAt"])
        a.kill()  # the Session is live on A, its reminder only in its log and A's memory
        assert now_ms() < due_ms - (TTL + 1) * 1000, "killed too late (machine too slow?)"

        def delivered() -> list[dict[str, Any]] | None:
            found = changes(b.all_events(session_id)["events"], "dispatch")
            return found or None

        (dispatch,) = wait_for(delivered, timeout=DUE_IN + 20, interval=0.05, what="delivery")
        assert dispatch["data"]["id"] == record["id"]
        listed = {row["id"]: row for row in b.get("/api/sessions").json()["sessions"]}
        assert listed[session_id]["live"] is True  # B took it over to deliver it
        assert dispatch["time"] >= due_ms  # at its time, not before
        # Nobody delivers it again (B keeps it; a stale entry would find nothing due).
        wait_for(
            lambda: any(e["type"] == "turn/end" for e in b.all_events(session_id)["events"][-3:]),
            what="the reminder's turn on B",
        )
        assert len(changes(b.all_events(session_id)["events"], "dispatch")) == 1
    finally:
        for web in (a, b):
            web.stop()
