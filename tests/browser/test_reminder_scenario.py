"""The reminder receipt in a real browser, against a real `dsh web` process.

One Session, driven through the page the way a person would: create it, send
a message with Enter, let the scripted model set a one-second reminder, watch
the receipt card arrive once the dispatch is stored, watch the follow-up turn
fail (the script has no reply left), and check the card stays — through the
failed turn, a page reload, and a SIGKILL plus restart of the host, where the
Session is opened cold from the list without starting its agent.

The prompt carries an HTML payload: it must reach the screen as text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=alert(1)>"
PROMPT = f"stretch {PAYLOAD}"
CARD = '[data-event-type="schedule/change"][data-view]'
TURN_ERROR = '[data-event-type="turn/end"]'
WAIT_MS = 20_000


def write_script(path: Path) -> Path:
    """Two replies: set the reminder, then answer its result. Nothing for the follow-up."""
    replies = [
        {
            "text": f"I'll remind you: {PAYLOAD}",
            "toolCalls": [
                {"name": "schedule_create", "arguments": {"prompt": PROMPT, "after_seconds": 1}}
            ],
        },
        {"text": "Done: the reminder is set."},
    ]
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def transcript(page: Page) -> Locator:
    return page.locator("[data-role=transcript]")


def stored_events(web: WebHost, session_id: str) -> list[dict[str, Any]]:
    return [line for line in web.stored_log(session_id) if "seq" in line]


def schedule_changes(web: WebHost, session_id: str, change: str) -> list[dict[str, Any]]:
    return [
        event
        for event in stored_events(web, session_id)
        if event["type"] == "schedule/change" and event["data"]["change"] == change
    ]


def expect_receipt(page: Page, *, seq: int, schedule_id: str, occurrence_at: str) -> Locator:
    """The one reminder card: at `seq`, showing the literal prompt, the id, and Snooze / Done."""
    card = page.locator(CARD)
    expect(card).to_have_count(1, timeout=WAIT_MS)
    expect(card).to_have_attribute("data-seq", str(seq))
    expect(card).to_contain_text(PROMPT)
    assert PROMPT in (card.text_content() or "")
    expect(card).to_contain_text(schedule_id)
    expect(card).not_to_contain_text("session-local")
    expect(card.locator("[data-action=snooze][data-seconds='600']")).to_have_count(1)
    expect(card.locator("[data-action=done]")).to_have_count(1)
    expect(card.locator("[data-schedule-id]")).to_have_attribute("data-schedule-id", schedule_id)
    expect(card.locator("time")).to_have_attribute("datetime", occurrence_at)
    return card


def expect_turn_error(page: Page) -> None:
    error = page.locator(TURN_ERROR)
    expect(error).to_have_count(1, timeout=WAIT_MS)
    expect(error).to_contain_text("model_unavailable")


def expect_no_markup(page: Page, watch: PageWatch) -> None:
    """The payload stayed text: no <img src=x> anywhere, no dialog, nothing logged as an error."""
    assert page.locator('img[src="x"]').count() == 0
    assert watch.problems == []


def test_reminder_card_survives_a_failed_turn_a_reload_and_a_restart(
    page: Page, watch: PageWatch, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    script = write_script(tmp_path / "script.json")
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        page.goto(web.page_url)
        page.locator("[data-role=new-session]").click()
        expect(transcript(page)).to_have_attribute("data-status", "live")
        current = page.locator("[data-role=session-list] [aria-current=true]")
        session_id = current.get_attribute("data-session-id")
        assert session_id

        composer = page.locator("[data-role=composer]")
        composer.fill(f"remind me in a second to stretch {PAYLOAD}")
        composer.press("Enter")
        expect(composer).to_have_value("")
        expect(page.locator('[data-event-type="message/user"]')).to_contain_text(PAYLOAD)

        # The card is shown only once its dispatch is in the stored log.
        page.locator(CARD).wait_for(timeout=WAIT_MS)
        (dispatch,) = schedule_changes(web, session_id, "dispatch")
        (create,) = schedule_changes(web, session_id, "create")
        record = create["data"]["record"]
        assert dispatch["data"]["id"] == record["id"]
        view = web.all_events(session_id)["views"][str(dispatch["seq"])]
        assert view["prompt"] == PROMPT
        receipt = {
            "seq": dispatch["seq"],
            "schedule_id": record["id"],
            "occurrence_at": view["occurrenceAt"],
        }

        # The follow-up turn fails; the card stays, before the error in the transcript.
        expect_turn_error(page)
        card = expect_receipt(page, **receipt)
        error_seq = int(page.locator(TURN_ERROR).get_attribute("data-seq") or -1)
        assert error_seq > dispatch["seq"]
        expect_no_markup(page, watch)

        card_shot = tmp_path / "reminder-card.png"
        card.screenshot(path=str(card_shot))
        page_shot = tmp_path / "reminder-page.png"
        page.screenshot(path=str(page_shot), full_page=True)
        artifact(card_shot)
        artifact(page_shot)

        # A reload rebuilds the card from history.
        page.reload()
        expect(transcript(page)).to_have_attribute("data-status", "live")
        expect_receipt(page, **receipt)
        expect_turn_error(page)
        expect_no_markup(page, watch)

        # Closing the page first: a dying host must not count as the client's error.
        page.goto("about:blank")
        web.restart()
        page.goto(web.page_url)
        item = page.locator(f'[data-role=session-list] [data-session-id="{session_id}"]')
        # After a restart the first reads open the stored log cold (server work): they get
        # the deadline of every other wait on the host, not the default 5 s, which a loaded
        # machine once passed.
        badge = item.locator("[data-badge]")
        expect(badge).to_have_attribute("data-badge", "cold", timeout=WAIT_MS)
        item.click()
        expect(transcript(page)).to_have_attribute("data-status", "cold", timeout=WAIT_MS)
        expect_receipt(page, **receipt)
        expect_turn_error(page)
        expect_no_markup(page, watch)
        cold_shot = tmp_path / "reminder-cold.png"
        page.screenshot(path=str(cold_shot), full_page=True)
        artifact(cold_shot)

        # Reading the cold history published no agent.
        detail = web.get(f"/api/sessions/{session_id}").json()
        assert detail["live"] is False
        assert detail["agent"] is None


def test_shift_enter_adds_a_line_and_enter_sends_the_whole_message(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    with WebHost.start(tmp_path / "data", model="demo") as web:
        page.goto(web.page_url)
        page.locator("[data-role=new-session]").click()
        expect(transcript(page)).to_have_attribute("data-status", "live")
        session_id = page.locator("[data-role=session-list] [aria-current=true]").get_attribute(
            "data-session-id"
        )
        assert session_id

        composer = page.locator("[data-role=composer]")
        composer.press_sequentially("first line")
        composer.press("Shift+Enter")
        composer.press_sequentially("second line")
        expect(composer).to_have_value("first line\nsecond line")
        assert page.locator("[data-role=pending]").count() == 0
        assert web.events(session_id)["events"] == []

        composer.press("Enter")
        expect(composer).to_have_value("")
        message = page.locator('[data-event-type="message/user"] .bubble')
        expect(message).to_have_count(1, timeout=WAIT_MS)
        assert message.text_content() == "first line\nsecond line"
        texts = wait_for(
            lambda: [
                event["data"]["text"]
                for event in web.events(session_id)["events"]
                if event["type"] == "message/user"
            ],
            what="the message to be stored",
        )
        assert texts == ["first line\nsecond line"]
        assert watch.problems == []
