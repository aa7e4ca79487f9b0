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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.lanes.observe import changes
from tests.support.webhost import WebHost, wait_for

from .receivers import Webhook, webhook

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


def set_reminders(web: WebHost, prompts: list[tuple[str, int]]) -> list[str]:
    """One Session per prompt, each told it through `web`; their ids once every one is set."""
    sessions = []
    for prompt, _ in prompts:
        session = web.create_session()
        response = web.post(f"/api/sessions/{session}/messages", {"text": prompt})
        assert response.status_code == 202, response.text
        wait_for(lambda s=session: created(web, s), what=f"{prompt!r} to be set")
        sessions.append(session)
    return sessions


def kill_while_due(web: WebHost, silent: Path) -> None:
    """SIGKILL `web` and start it again at about 4, 8 and 12 s, while reminders fall due.

    The next lives answer no turn (`silent`: a reminder's turn then fails, after its
    dispatch is stored): the script played again would set new reminders."""
    started = time.monotonic()
    web.model = f"scripted:{silent}"
    for kill in range(1, KILLS + 1):
        wait_for(lambda k=kill: time.monotonic() - started >= 4 * k, timeout=30)
        web.restart()


def all_notified(
    hook: Webhook, hosts: list[WebHost], dispatches: Callable[[str], int], sessions: list[str]
) -> dict[str, int]:
    """Wait until every Session shows a dispatch, the receiver has at least as many
    notifications and every host's outbox is empty; each Session's dispatches then."""
    dispatched: dict[str, int] = {}

    def every_dispatch() -> bool:
        for session in sessions:
            dispatched[session] = dispatches(session)
        return all(dispatched.values())

    wait_for(every_dispatch, timeout=60, what="every reminder to be dispatched")
    wait_for(
        lambda: len(hook.received) >= sum(dispatched.values()),
        timeout=60,
        what="every reminder to be notified",
    )
    for web in hosts:
        wait_for(
            lambda w=web: w.get("/api/health").json()["notify"]["pending"] == 0,
            timeout=30,
            what="the outbox to be empty",
        )
    every_dispatch()
    return dispatched


def assert_once_each(
    hook: Webhook, prompts: list[tuple[str, int]], sessions: list[str], dispatched: dict[str, int]
) -> None:
    """Nothing lost — a kill inside the schedule plugin's own window may dispatch a
    reminder twice (each dispatch is an alert of its own) — and nothing else sent twice
    but through a kill's window: at most one duplicate per kill."""
    received = Counter((r["title"], r["message"].rsplit("/?session=", 1)[1]) for r in hook.received)
    expected = {
        (prompt, session): dispatched[session]
        for (prompt, _), session in zip(prompts, sessions, strict=True)
    }
    assert set(received) == set(expected), (received, expected)
    assert all(received[key] >= count for key, count in expected.items()), (received, expected)
    duplicates = sum(received[key] - count for key, count in expected.items())
    assert duplicates <= KILLS, (received, expected)


def silent_script(directory: Path) -> Path:
    path = directory / "silent.json"
    path.write_text("[]", encoding="utf-8")
    return path


def test_kills_lose_no_notification_and_duplicate_at_most_one_per_kill(tmp_path: Path) -> None:
    prompts = [(f"reminder number {n}", 3 + 2 * n) for n in range(REMINDERS)]
    with webhook() as hook:
        model = f"scripted:{script(tmp_path, prompts)}"
        layout = overlay(tmp_path, hook.url)
        with WebHost.start(tmp_path / "data", overlay=layout, model=model) as web:
            sessions = set_reminders(web, prompts)
            kill_while_due(web, silent_script(tmp_path))
            dispatched = all_notified(
                hook,
                [web],
                lambda s: len(changes(web.stored_log(s)[1:], "dispatch")),
                sessions,
            )
    assert_once_each(hook, prompts, sessions, dispatched)
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
    silent = silent_script(tmp_path)
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
            sessions = set_reminders(a, prompts)
            kill_while_due(a, silent)
            dispatched = all_notified(
                hook,
                [a, b],
                lambda s: len(changes(b.all_events(s)["events"], "dispatch")),
                sessions,
            )
        finally:
            a.stop()
            b.stop()
    assert_once_each(hook, prompts, sessions, dispatched)
