"""Attention across conversations, in Debian's Chromium against a real `dsh web`.

A reminder set in one conversation fires while another is open: the page
hears it on `WS /api/live` — the first conversation's list entry counts it
(`[data-role=unread]`), the tab title too, and one system notification names
it under that conversation's title. Opening the conversation reads it (the
host keeps the mark). Its card's **Snooze 10 min** makes a new reminder (the
panel lists it, a `schedule/snooze` line says until when) and the card says
it was snoozed, also after a reload.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import new_session, send, write_script
from .test_reminders_panel_scenario import NOTIFICATION_SPY

pytestmark = pytest.mark.browser

WAIT_MS = 20_000


def stored(web: WebHost, session_id: str) -> list[dict[str, Any]]:
    return [line for line in web.stored_log(session_id) if "seq" in line]


def test_a_reminder_of_another_conversation_is_counted_notified_read_and_snoozed(
    browser: Browser, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    script = write_script(
        tmp_path / "script.json",
        [
            {
                "text": "Setting it.",
                "toolCalls": [
                    {
                        "name": "schedule_create",
                        "arguments": {"prompt": "stretch", "after_seconds": 3},
                    }
                ],
            },
            {"text": "Set."},
            {"text": "Time to stretch!"},
        ],
    )
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, locale="en-US", timezone_id="UTC"
    )
    context.grant_permissions(["notifications"])
    context.add_init_script(NOTIFICATION_SPY)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    watch = PageWatch().attach(page)
    try:
        with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
            first = new_session(page, web)
            page.locator("[data-role=notify]").click()
            expect(page.locator("[data-role=notify]")).to_have_attribute("data-state", "on")
            send(page, "remind me in 3 seconds to stretch")
            expect(page.locator("[data-role=transcript]")).to_contain_text("Set.", timeout=WAIT_MS)

            # Another conversation is open when it fires.
            page.locator("[data-role=new-session]").click()
            expect(page.locator(f'[data-session-id="{first}"]')).not_to_have_attribute(
                "aria-current", "true"
            )
            badge = page.locator(f'[data-session-id="{first}"] [data-role=unread]')
            expect(badge).to_have_text("1", timeout=WAIT_MS)
            page.wait_for_function("() => document.title.startsWith('(1) ')")
            notes = page.evaluate("window.__notifications")
            assert [note["title"] for note in notes] == [
                "remind me in 3 seconds to stretch · stretch"
            ]
            shot = tmp_path / "unread.png"
            page.screenshot(path=str(shot))
            artifact(shot)

            # Opening it reads it, on the host too.
            page.locator(f'[data-session-id="{first}"] [data-action=open]').click()
            expect(badge).to_have_text("")
            page.wait_for_function("() => !document.title.startsWith('(')")
            rows = web.get("/api/sessions").json()["sessions"]
            assert {row["id"]: row["unread"] for row in rows}[first] == 0

            card = page.locator(
                '[data-event-type="schedule/change"][data-view] [data-role=schedule-reminder]'
            )
            expect(card).to_have_count(1)
            card.locator("[data-action=snooze][data-seconds='600']").click()
            expect(card).to_have_attribute("data-state", "snoozed")
            expect(card.locator("[data-role=reminder-outcome]")).to_contain_text(
                "Snoozed — again at"
            )
            expect(page.locator("[data-role=reminders] [data-reminder-id]")).to_have_count(1)
            wait_for(
                lambda: [e for e in stored(web, first) if e["type"] == "schedule/snooze"] or None,
                what="the stored snooze",
            )
            expect(page.locator("[data-role=schedule-snooze]")).to_contain_text("Snoozed “stretch”")
            shot = tmp_path / "snoozed.png"
            page.screenshot(path=str(shot))
            artifact(shot)

            page.reload()
            card = page.locator(
                '[data-event-type="schedule/change"][data-view] [data-role=schedule-reminder]'
            )
            expect(card).to_have_attribute("data-state", "snoozed", timeout=WAIT_MS)
            assert watch.problems == []
    finally:
        context.close()
