"""The session list as a person uses it, in Debian's Chromium against a real `dsh web` with
the demo model: Sessions titled by their first message, renamed in place, searched through
the host, deleted after a confirmation (which says what stops) and brought back with `dsh
sessions restore` or the page's Undo, while another tab's list follows without a reload.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.webhost import REPO, WebHost, wait_for

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send

pytestmark = pytest.mark.browser


def entry(page: Page, session_id: str) -> Locator:
    return page.locator(f"[data-role=session-list] [data-session-id='{session_id}']")


def listed_ids(page: Page) -> list[str | None]:
    entries = page.locator("[data-role=session-list] [data-session-id]")
    return [entries.nth(n).get_attribute("data-session-id") for n in range(entries.count())]


def stored_titles(web: WebHost, session_id: str) -> list[str]:
    return [
        event["data"]["title"]
        for event in web.all_events(session_id)["events"]
        if event["type"] == "session/title"
    ]


def test_rename_search_delete_and_restore_from_the_session_list(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    with WebHost.start(data_dir, model="demo") as web:
        trip = web.create_session()
        queued = web.post(f"/api/sessions/{trip}/messages", {"text": "Plan the trip to Lisbon"})
        assert queued.status_code == 202
        wait_for(lambda: web.get("/api/sessions").json()["sessions"][0]["title"], what="a title")
        tour = new_session(page, web)
        send(page, "remind me in 10 minutes to stretch")
        title = entry(page, tour).locator("[data-role=session-title]")
        expect(title).to_have_text("remind me in 10 minutes to stretch", timeout=WAIT_MS)
        expect(entry(page, trip).locator("[data-role=session-title]")).to_have_text(
            "Plan the trip to Lisbon"
        )

        # Rename in place: Enter saves, and the title is a stored session/title event.
        entry(page, tour).locator("[data-action=rename]").click()
        field = page.locator("[data-role=rename-input]")
        expect(field).to_be_focused()
        field.fill("Tour")
        field.press("Enter")
        expect(title).to_have_text("Tour", timeout=WAIT_MS)
        assert wait_for(lambda: stored_titles(web, tour), what="the stored title") == ["Tour"]
        expect(page.locator("[data-role=title]")).to_have_text("Tour")

        # Search asks the host: titles and first messages, case-insensitive.
        search = page.locator("[data-role=session-search]")
        with page.expect_response("**/api/sessions?q=LISBON") as searched:
            search.fill("LISBON")
            search.press("Enter")
        assert [row["id"] for row in searched.value.json()["sessions"]] == [trip]
        expect(page.locator("[data-role=session-list] [data-session-id]")).to_have_count(1)
        assert listed_ids(page) == [trip]
        search.fill("tour")
        search.press("Enter")
        expect(entry(page, tour)).to_have_count(1, timeout=WAIT_MS)
        assert listed_ids(page) == [tour]
        search.fill("nothing like this")
        search.press("Enter")
        expect(page.locator("[data-role=no-sessions]")).to_be_visible(timeout=WAIT_MS)
        search.press("Escape")
        expect(page.locator("[data-role=session-list] [data-session-id]")).to_have_count(2)

        # Delete asks first; cancelling keeps it, confirming moves its log to the trash.
        entry(page, tour).locator("[data-action=delete]").click()
        dialog = page.locator("[data-role=confirm-delete]")
        expect(dialog).to_contain_text("Tour")
        expect(dialog.locator("[data-role=delete-stops]")).to_have_text(
            "Its pending reminder stops."
        )
        expect(dialog.locator(".hint code")).to_have_text(f"dsh sessions restore {tour}")
        dialog.locator("[data-value=cancel]").click()
        expect(dialog).to_have_count(0)
        assert web.get(f"/api/sessions/{tour}").status_code == 200
        entry(page, tour).locator("[data-action=delete]").click()
        with page.expect_response(f"**/api/sessions/{tour}") as deleted:
            dialog.locator("[data-value=delete]").click()
        assert deleted.value.status == 204
        expect(entry(page, tour)).to_have_count(0, timeout=WAIT_MS)
        assert web.get(f"/api/sessions/{tour}").status_code == 404
        assert (data_dir / "trash" / f"{tour}.jsonl").is_file()

        # `dsh sessions restore` with the start of the id, beside the running host.
        restored = subprocess.run(
            [sys.executable, "-m", "dsh.cli", "sessions", "restore", tour[:6]],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            env={"DSH_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"},
            check=False,
        )
        assert (restored.returncode, restored.stdout) == (0, f"restored session {tour}\n")
        search.fill("tour")
        search.press("Enter")
        expect(entry(page, tour).locator("[data-role=session-title]")).to_have_text(
            "Tour", timeout=WAIT_MS
        )
        entry(page, tour).locator("[data-action=open]").click()
        expect(page.locator('[data-event-type="message/user"] .bubble')).to_have_text(
            "remind me in 10 minutes to stretch", timeout=WAIT_MS
        )
        assert watch.problems == []


def test_undo_after_a_delete_and_another_tab_follows_without_a_reload(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    with WebHost.start(data_dir, model="demo") as web:
        gone = new_session(page, web)
        send(page, "Plans for Sunday")
        name = entry(page, gone).locator("[data-role=session-title]")
        expect(name).to_have_text("Plans for Sunday", timeout=WAIT_MS)
        other = page.context.new_page()
        watch.attach(other)
        other.goto(web.page_url)
        expect(entry(other, gone)).to_have_count(1, timeout=WAIT_MS)

        entry(page, gone).locator("[data-action=delete]").click()
        dialog = page.locator("[data-role=confirm-delete]")
        expect(dialog.locator(".hint code")).to_have_text(f"dsh sessions restore {gone}")
        dialog.locator("[data-value=delete]").click()
        note = page.locator("[data-role=undo]")
        expect(note).to_be_visible(timeout=WAIT_MS)
        expect(note).to_contain_text("“Plans for Sunday” deleted.")
        expect(entry(page, gone)).to_have_count(0)
        # The other tab hears the host's list change on WS /api/live: no reload.
        expect(entry(other, gone)).to_have_count(0, timeout=WAIT_MS)

        with page.expect_response(f"**/api/sessions/{gone}/restore") as restored:
            note.locator("[data-action=undo]").click()
        assert restored.value.status == 200
        expect(note).to_be_hidden()
        expect(entry(page, gone)).to_have_count(1, timeout=WAIT_MS)
        expect(entry(other, gone).locator("[data-role=session-title]")).to_have_text(
            "Plans for Sunday", timeout=WAIT_MS
        )
        assert web.get(f"/api/sessions/{gone}").status_code == 200
        assert not (data_dir / "trash" / f"{gone}.jsonl").exists()
        assert watch.problems == []
