"""The keyboard, in Debian's Chromium against a real `dsh web`.

- The reminders panel keeps the keyboard on the row it acted on: after
  Pause, Resume and Snooze (each pressed with Enter) the focus is on the
  same reminder's row — the counterpart button, or the same one — never
  back on `<body>`, also once the state came back from the host.
- The conversation list: on a row that is not the open conversation, F2
  opens its rename field and Delete its delete confirmation (cancelled: it
  stays); the `?` help lists both keys.
- The message menu of the person's own bubble opens beside the bubble, on
  the right, not at the far left of the transcript.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import FloatRect, Locator, Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send, write_script

pytestmark = pytest.mark.browser

# Where the keyboard is: the reminder row and the button it is on.
FOCUS = """() => {
  const active = document.activeElement;
  return {
    tag: active?.tagName ?? null,
    row: active?.closest("[data-reminder-id]")?.getAttribute("data-reminder-id") ?? null,
    action: active?.getAttribute("data-action") ?? null,
    seconds: active?.getAttribute("data-seconds") ?? null,
  };
}"""


def focus(page: Page) -> dict[str, Any]:
    where: dict[str, Any] = page.evaluate(FOCUS)
    return where


def assert_kept_on(page: Page, row: str, action: str, seconds: str | None = None) -> None:
    """The keyboard is on `action` of reminder `row`, and stays there through late redraws."""
    expected = {"tag": "BUTTON", "row": row, "action": action, "seconds": seconds}
    assert focus(page) == expected
    page.wait_for_timeout(300)  # a later state frame redraws the row: the focus stays
    assert focus(page) == expected


def settled(row: Locator, button: str) -> None:
    """The row shows `button` enabled again: the host's answer and its state are drawn."""
    expect(row).not_to_have_attribute("aria-busy", "true", timeout=WAIT_MS)
    expect(row.locator(button)).to_be_enabled(timeout=WAIT_MS)


def stored_changes(web: WebHost, session_id: str) -> list[str]:
    return [
        line["data"].get("change")
        for line in web.stored_log(session_id)
        if line.get("type") == "schedule/change"
    ]


def test_pause_resume_and_snooze_keep_the_keyboard_on_the_reminder_row(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    create = "schedule_create"
    script = write_script(
        tmp_path / "script.json",
        [
            {
                "text": "Two.",
                "toolCalls": [
                    {"name": create, "arguments": {"prompt": "tea", "after_seconds": 1800}},
                    {"name": create, "arguments": {"prompt": "walk", "after_seconds": 3600}},
                ],
            },
            {"text": "Both set."},
        ],
    )
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        session_id = new_session(page, web)
        send(page, "two reminders")
        panel = page.locator("[data-role=reminders]")
        expect(panel.locator("[data-reminder-id]")).to_have_count(2, timeout=WAIT_MS)
        tea = panel.locator('[data-reminder-id="rem-1"]')

        tea.locator("[data-action=pause]").focus()
        page.keyboard.press("Enter")
        expect(tea.locator("[data-role=reminder-paused]")).to_have_count(1, timeout=WAIT_MS)
        settled(tea, "[data-action=resume]")
        assert_kept_on(page, "rem-1", "resume")

        page.keyboard.press("Enter")
        expect(tea.locator("[data-role=reminder-paused]")).to_have_count(0, timeout=WAIT_MS)
        settled(tea, "[data-action=pause]")
        assert_kept_on(page, "rem-1", "pause")

        before = tea.locator("[data-role=reminder-next]").get_attribute("datetime")
        tea.locator("[data-action=snooze][data-seconds='600']").focus()
        page.keyboard.press("Enter")
        expect(tea.locator("[data-role=reminder-next]")).not_to_have_attribute(
            "datetime", before or "", timeout=WAIT_MS
        )
        settled(tea, "[data-action=snooze][data-seconds='600']")
        assert_kept_on(page, "rem-1", "snooze", "600")

        # Each was the host's change, stored; the other reminder was left alone.
        assert wait_for(
            lambda: stored_changes(web, session_id).count("update") == 3 or None,
            what="three stored updates",
        )
        expect(
            panel.locator('[data-reminder-id="rem-2"] [data-role=reminder-paused]')
        ).to_have_count(0)
        assert watch.problems == []


def test_f2_and_delete_on_a_row_that_is_not_open_and_the_help_lists_them(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    with WebHost.start(tmp_path / "data", model="absent") as web:
        groceries = web.create_session()
        named = web.request("PATCH", f"/api/sessions/{groceries}", json={"title": "Groceries"})
        assert named.status_code == 200, named.text
        here = new_session(page, web)
        row = page.locator(f'[data-role=session-list] [data-session-id="{groceries}"]')
        expect(row).not_to_have_attribute("aria-current", "true")
        opener = row.locator("[data-action=open]")

        opener.focus()
        page.keyboard.press("F2")
        field = row.locator("[data-role=rename-input]")
        expect(field).to_be_focused()
        expect(field).to_have_value("Groceries")
        page.keyboard.press("Escape")
        expect(field).to_have_count(0)
        expect(row.locator("[data-role=session-title]")).to_have_text("Groceries")
        expect(opener).to_be_focused()

        page.keyboard.press("Delete")
        dialog = page.locator("[data-role=confirm-delete]")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("Groceries")
        dialog.locator("[data-value=cancel]").click()
        expect(dialog).to_have_count(0)
        expect(opener).to_be_focused()
        assert web.get(f"/api/sessions/{groceries}").status_code == 200
        current = page.locator("[data-role=session-list] [aria-current=true]")
        expect(current).to_have_attribute("data-session-id", here)

        page.locator("body").focus()
        page.keyboard.press("?")
        help_dialog = page.locator("dialog[data-role=help]")
        expect(help_dialog).to_be_visible()
        expect(help_dialog.locator("[data-shortcut=rename] kbd")).to_have_text(["F2"])
        expect(help_dialog.locator("[data-shortcut=delete] kbd")).to_have_text(["Delete"])
        page.keyboard.press("Escape")
        expect(help_dialog).to_have_count(0)
        assert watch.problems == []


def right(box: FloatRect) -> float:
    return box["x"] + box["width"]


def test_the_menu_of_the_persons_own_message_opens_beside_the_bubble(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.json", [{"text": "Noted."}])
    text = "please remind me to water the plants tomorrow morning"
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        new_session(page, web)
        send(page, text)
        expect(page.locator("[data-role=transcript]")).to_contain_text("Noted.", timeout=WAIT_MS)
        mine = page.locator('[data-event-type="message/user"]')
        expect(mine.locator(".bubble")).to_have_text(text)
        mine.focus()
        page.keyboard.press("Enter")
        menu = mine.locator("[data-role=message-menu]")
        expect(menu).to_be_visible()
        expect(menu.locator("[data-action=copy-message]")).to_be_focused()

        bubble = mine.locator(".bubble").bounding_box()
        opened = menu.bounding_box()
        transcript = page.locator("[data-role=transcript]").bounding_box()
        assert bubble is not None and opened is not None and transcript is not None
        # The bubble is on the right: the menu lies under it, right edge to right edge.
        assert bubble["x"] <= opened["x"], (bubble, opened)
        assert abs(right(opened) - right(bubble)) <= 8, (bubble, opened)
        assert opened["x"] > transcript["x"] + transcript["width"] / 2, (opened, transcript)
        assert bubble["y"] - 8 <= opened["y"] <= bubble["y"] + bubble["height"], (bubble, opened)

        page.keyboard.press("Escape")
        expect(menu).to_have_count(0)
        expect(mine).to_be_focused()
        assert watch.problems == []
