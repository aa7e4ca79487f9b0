"""SIGKILL rounds of a real `dsh web`: every dispatched reminder is notified, none lost.

A host with tool-schedule and notify (one `json://` receiver, in this test)
and `wake_cold_sessions = true` is given reminders due over a few seconds,
then killed (SIGKILL) and restarted several times while they fall due. At
the end, every reminder the Sessions' logs show dispatched reached the
receiver; a reminder may arrive twice only through the named window (a kill
after the receiver took it and before the outbox recorded that), so at most
one duplicate per kill.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.lanes.observe import changes
from tests.support.webhost import WebHost, wait_for

from .receivers import webhook

pytestmark = pytest.mark.process

REMINDERS = 6
KILLS = 3


def overlay(directory: Path, url: str) -> Path:
    path = directory / "overlay.toml"
    path.write_text(
        "[host]\nwake_cold_sessions = true\n\n"
        "[plugins.tool-schedule]\n\n"
        f"[plugins.notify]\nurls = [{json.dumps(url)}]\n",
        encoding="utf-8",
    )
    return path


def script(directory: Path, prompts: list[tuple[str, int]]) -> Path:
    replies: list[dict[str, Any]] = []
    for prompt, seconds in prompts:
        arguments = {"prompt": prompt, "after_seconds": seconds}
        replies.append({"toolCalls": [{"name": "schedule_create", "arguments": arguments}]})
        replies.append({"text": f"Set: {prompt}."})
    path = directory / "script.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def created(web: WebHost, session_id: str) -> bool:
    events = web.all_events(session_id)["events"]
    return any(event["type"] == "turn/end" for event in events)


def test_kills_lose_no_notification_and_duplicate_at_most_one_per_kill(tmp_path: Path) -> None:
    prompts = [(f"reminder number {n}", 3 + 2 * n) for n in range(REMINDERS)]
    with webhook() as hook:
        data = tmp_path / "data"
        model = f"scripted:{script(tmp_path, prompts)}"
        with WebHost.start(data, overlay=overlay(tmp_path, hook.url), model=model) as web:
            sessions = []
            for prompt, _ in prompts:
                session = web.create_session()
                response = web.post(f"/api/sessions/{session}/messages", {"text": prompt})
                assert response.status_code == 202, response.text
                wait_for(lambda s=session: created(web, s), what=f"{prompt!r} to be set")
                sessions.append(session)
            started = time.monotonic()
            # The next lives answer no turn (a reminder's turn then fails, after its
            # dispatch is stored): a script played again would set new reminders.
            silent = tmp_path / "silent.json"
            silent.write_text("[]", encoding="utf-8")
            web.model = f"scripted:{silent}"
            for kill in range(1, KILLS + 1):
                # Kill while reminders are falling due: at about 4, 8, 12 s.
                wait_for(lambda k=kill: time.monotonic() - started >= 4 * k, timeout=30)
                web.restart()
            dispatched: dict[str, int] = {}

            def every_dispatch() -> bool:
                for session in sessions:
                    dispatched[session] = len(changes(web.stored_log(session)[1:], "dispatch"))
                return all(dispatched.values())

            wait_for(every_dispatch, timeout=40, what="every reminder to be dispatched")
            wait_for(
                lambda: len(hook.received) >= sum(dispatched.values()),
                timeout=40,
                what="every reminder to be notified",
            )
            wait_for(
                lambda: web.get("/api/health").json()["notify"]["pending"] == 0,
                timeout=20,
                what="the outbox to be empty",
            )
            every_dispatch()
    received = Counter((r["title"], r["message"].rsplit("/?session=", 1)[1]) for r in hook.received)
    expected = {
        (prompt, session): dispatched[session]
        for (prompt, _), session in zip(prompts, sessions, strict=True)
    }
    # Nothing lost (a kill inside the schedule plugin's own window may dispatch a
    # reminder twice, DESIGN: each dispatch is an alert of its own), nothing else sent.
    assert set(received) == set(expected), (received, expected)
    assert all(received[key] >= count for key, count in expected.items()), (received, expected)
    duplicates = sum(received[key] - count for key, count in expected.items())
    assert duplicates <= KILLS, (received, expected)
    for received in hook.received:
        assert "/?session=" in received["message"]


def pg_overlay(directory: Path, url: str) -> Path:
    path = directory / "overlay-pg.toml"
    path.write_text(
        # Short leases: a killed host's Sessions are taken over in about two seconds.
        "[store]\nlease_ttl_seconds = 2.0\nlease_renew_seconds = 0.5\n\n"
        + overlay(directory, url).read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    return path


@pytest.mark.pg
def test_two_hosts_on_postgresql_notify_each_dispatch_once_through_kills(
    tmp_path: Path, pg_url: str
) -> None:
    """A and B share one database (Sessions, wake table, outbox): A sets the reminders and
    is killed while they fall due; B takes its Sessions over and both send from the one
    outbox. Every dispatch is notified, a delivery is never sent by both hosts (a
    duplicate only through a kill's window), nothing is lost."""
    prompts = [(f"shared reminder {n}", 3 + 2 * n) for n in range(REMINDERS)]
    silent = tmp_path / "silent.json"
    silent.write_text("[]", encoding="utf-8")
    with webhook() as hook:
        layout = pg_overlay(tmp_path, hook.url)
        store = ["--store", pg_url]
        a = WebHost(
            tmp_path / "a", overlay=layout, model=f"scripted:{script(tmp_path, prompts)}",
            extra_args=store,
        )  # fmt: skip
        b = WebHost(tmp_path / "b", overlay=layout, model=f"scripted:{silent}", extra_args=store)
        a.boot()
        b.boot()
        try:
            sessions = []
            for prompt, _ in prompts:
                session = a.create_session()
                response = a.post(f"/api/sessions/{session}/messages", {"text": prompt})
                assert response.status_code == 202, response.text
                wait_for(lambda s=session: created(a, s), what=f"{prompt!r} to be set")
                sessions.append(session)
            started = time.monotonic()
            a.model = f"scripted:{silent}"
            for kill in range(1, KILLS + 1):
                wait_for(lambda k=kill: time.monotonic() - started >= 4 * k, timeout=30)
                a.restart()
            dispatched: dict[str, int] = {}

            def every_dispatch() -> bool:
                for session in sessions:
                    events = b.all_events(session)["events"]
                    dispatched[session] = len(changes(events, "dispatch"))
                return all(dispatched.values())

            wait_for(every_dispatch, timeout=60, what="every reminder to be dispatched")
            wait_for(
                lambda: len(hook.received) >= sum(dispatched.values()),
                timeout=60,
                what="every reminder to be notified",
            )
            for web in (a, b):
                wait_for(
                    lambda w=web: w.get("/api/health").json()["notify"]["pending"] == 0,
                    timeout=30,
                    what="the shared outbox to be empty",
                )
            every_dispatch()
        finally:
            a.stop()
            b.stop()
    received = Counter((r["title"], r["message"].rsplit("/?session=", 1)[1]) for r in hook.received)
    expected = {
        (prompt, session): dispatched[session]
        for (prompt, _), session in zip(prompts, sessions, strict=True)
    }
    assert set(received) == set(expected), (received, expected)
    assert all(received[key] >= count for key, count in expected.items()), (received, expected)
    assert sum(received[key] - count for key, count in expected.items()) <= KILLS
