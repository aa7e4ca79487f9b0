"""Attention across conversations with several tabs, in Debian's Chromium against a real
`dsh web`.

- A reminder fires in another conversation while the tab is unfocused: the
  title and that conversation's entry count it, one notification names it;
  clicking the notification brings the tab forward and opens the
  conversation, which reads it (on the host too).
- Two tabs agree: both count a reminder of a conversation made elsewhere
  after they loaded; opening it in one tab clears the count in the other.
- Done on the card in one tab closes the other tab's notification.
- Tabs left open across a host restart hear a reminder that fires after it
  (`WS /api/live` reconnected), and Snooze 10 min on its card makes the
  linked reminder.
- A hidden tab (no animation frames, as browsers do) counts in its title,
  and reads the open conversation once it is shown again.

Each reminder is set by a message posted through the HTTP API once the tabs
are in place (another device, to the page), so it fires while they show
what the scenario needs, not at a time that races the browser. Headless
Chromium slows the tabs behind the front one, so a test brings a tab to the
front before it acts there, as the reader would.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import (
    WAIT_MS,
    free_port,
    new_session,
    only_network_complaints,
    write_script,
)
from .test_reminders_panel_scenario import LOOK_AWAY

pytestmark = pytest.mark.browser

# Records every notification the page makes (the real one still shows) and
# whether the page closed it; `window.focus()` does what a browser does when
# the page asks for the window after a click on its notification: the window
# comes forward and has the focus again (undoing LOOK_AWAY).
SPY = """
(() => {
  const Real = window.Notification;
  if (typeof Real !== "function") return;
  window.__notifications = [];
  window.__focusRequests = 0;
  class Recorded extends Real {
    constructor(title, options) {
      super(title, options);
      this.__record = { title, body: options?.body ?? "", tag: options?.tag ?? "", closed: false };
      window.__notifications.push(this.__record);
      window.__lastNotification = this;
    }
    close() {
      this.__record.closed = true;
      super.close();
    }
  }
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  Recorded.requestPermission = (...args) => Real.requestPermission(...args);
  window.Notification = Recorded;
  window.focus = () => {
    window.__focusRequests += 1;
    delete document.hasFocus;
    window.dispatchEvent(new Event("focus"));
  };
})();
"""
CLICK_LAST_NOTIFICATION = "() => window.__lastNotification.dispatchEvent(new Event('click'))"
CARD = '[data-event-type="schedule/change"][data-view]'


def reminder_script(path: Path, prompt: str) -> Path:
    """The scripted model sets `prompt` due in 2 s, says so, and answers the reminder."""
    return write_script(
        path,
        [
            {
                "text": "Setting it.",
                "toolCalls": [
                    {
                        "name": "schedule_create",
                        "arguments": {"prompt": prompt, "after_seconds": 2},
                    }
                ],
            },
            {"text": "Set."},
            {"text": f"Time to {prompt}!"},
        ],
    )


@contextmanager
def spied_context(browser: Browser) -> Iterator[BrowserContext]:
    """A browser profile (a person's device) allowed to notify, with SPY on every page."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, locale="en-US", timezone_id="UTC"
    )
    try:
        context.grant_permissions(["notifications"])
        context.add_init_script(SPY)
        context.set_default_timeout(WAIT_MS)
        yield context
    finally:
        context.close()


def watched(context: BrowserContext) -> tuple[Page, PageWatch]:
    page = context.new_page()
    return page, PageWatch().attach(page)


def named_session(web: WebHost, title: str) -> str:
    """A conversation made through the API (elsewhere, to the page), titled `title`."""
    session_id = web.create_session()
    renamed = web.request("PATCH", f"/api/sessions/{session_id}", json={"title": title})
    assert renamed.status_code == 200, renamed.text
    return session_id


def ask_for_reminder(web: WebHost, session_id: str, prompt: str) -> None:
    """Post the message that makes the scripted model set the reminder (due in 2 s)."""
    queued = web.post(f"/api/sessions/{session_id}/messages", {"text": f"remind me to {prompt}"})
    assert queued.status_code == 202, queued.text


def open_in(page: Page, web: WebHost, session_id: str) -> None:
    """Go to the tab and load it with `session_id` open (its address, as a bookmark would)."""
    page.bring_to_front()
    page.goto(f"{web.page_url}#/s/{session_id}")
    expect(entry(page, session_id)).to_have_attribute("aria-current", "true", timeout=WAIT_MS)
    expect(page.locator("[data-role=transcript]")).to_have_attribute(
        "data-status", "live", timeout=WAIT_MS
    )


def entry(page: Page, session_id: str) -> Locator:
    return page.locator(f'[data-role=session-list] [data-session-id="{session_id}"]')


def badge(page: Page, session_id: str) -> Locator:
    return entry(page, session_id).locator("[data-role=unread]")


def notify_me(page: Page) -> None:
    button = page.locator("[data-role=notify]")
    button.click()
    expect(button).to_have_attribute("data-state", "on", timeout=WAIT_MS)


def host_unread(web: WebHost, session_id: str) -> int:
    rows = web.get("/api/sessions").json()["sessions"]
    counts: dict[str, int] = {row["id"]: row["unread"] for row in rows}
    return counts[session_id]


def wait_host_unread(web: WebHost, session_id: str, count: int) -> None:
    wait_for(
        lambda: host_unread(web, session_id) == count,
        what=f"the host to count {count} unread in {session_id}",
    )


def notifications(page: Page) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = page.evaluate("window.__notifications")
    return notes


def notified(page: Page, *, polling: float | Literal["raf"] = "raf") -> list[dict[str, Any]]:
    """The page's notifications, once it made one."""
    page.wait_for_function("() => window.__notifications.length > 0", polling=polling)
    return notifications(page)


def title_counts(page: Page, count: int) -> None:
    page.wait_for_function("(n) => document.title.startsWith(`(${n}) `)", arg=count)


def title_counts_nothing(page: Page) -> None:
    # Polled on a timer, not on animation frames: a tab just shown may get few under load.
    page.wait_for_function("() => !document.title.startsWith('(')", polling=100)


def test_clicking_the_notification_of_another_conversation_opens_it_and_reads_it(
    browser: Browser, tmp_path: Path
) -> None:
    script = reminder_script(tmp_path / "script.json", "stretch")
    with (
        WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web,
        spied_context(browser) as context,
    ):
        garden = named_session(web, "Garden")
        page, watch = watched(context)
        here = new_session(page, web)
        notify_me(page)
        page.evaluate(LOOK_AWAY)

        ask_for_reminder(web, garden, "stretch")
        title_counts(page, 1)
        expect(badge(page, garden)).to_have_text("1", timeout=WAIT_MS)
        expect(badge(page, here)).to_have_text("", timeout=WAIT_MS)
        assert host_unread(web, garden) == 1
        page.wait_for_timeout(300)  # told once, even across redraws
        notes = notifications(page)
        assert [(note["title"], note["closed"]) for note in notes] == [("Garden · stretch", False)]
        assert notes[0]["body"].startswith("Due at ")
        expect(entry(page, here)).to_have_attribute("aria-current", "true", timeout=WAIT_MS)

        page.evaluate(CLICK_LAST_NOTIFICATION)
        expect(entry(page, garden)).to_have_attribute("aria-current", "true", timeout=WAIT_MS)
        assert page.evaluate("window.__focusRequests") == 1, "the page asked for the window"
        expect(page.locator(f"{CARD} [data-role=schedule-reminder]")).to_have_count(
            1, timeout=WAIT_MS
        )
        expect(page.locator("[data-role=transcript]")).to_contain_text(
            "Time to stretch!", timeout=WAIT_MS
        )
        expect(badge(page, garden)).to_have_text("", timeout=WAIT_MS)
        title_counts_nothing(page)
        wait_host_unread(web, garden, 0)
        assert [note["closed"] for note in notifications(page)] == [True]
        assert watch.problems == []


def test_two_tabs_count_a_conversation_made_elsewhere_and_agree_once_one_opens_it(
    browser: Browser, tmp_path: Path
) -> None:
    script = reminder_script(tmp_path / "script.json", "water the plants")
    with (
        WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web,
        spied_context(browser) as context,
    ):
        first, first_watch = watched(context)
        second, second_watch = watched(context)
        first.bring_to_front()
        here = new_session(first, web)
        open_in(second, web, here)

        # Made after both tabs loaded: neither list has it yet.
        garden = named_session(web, "Garden")
        ask_for_reminder(web, garden, "water the plants")
        for tab in (first, second):
            expect(badge(tab, garden)).to_have_text("1", timeout=WAIT_MS)
            expect(entry(tab, garden).locator("[data-role=session-title]")).to_have_text(
                "Garden", timeout=WAIT_MS
            )
            title_counts(tab, 1)
        assert host_unread(web, garden) == 1

        first.bring_to_front()  # the reader goes to the first tab
        entry(first, garden).locator("[data-action=open]").click()
        expect(first.locator(CARD)).to_have_count(1, timeout=WAIT_MS)
        expect(badge(first, garden)).to_have_text("", timeout=WAIT_MS)
        expect(badge(second, garden)).to_have_text("", timeout=WAIT_MS)
        title_counts_nothing(second)
        expect(entry(second, here)).to_have_attribute("aria-current", "true", timeout=WAIT_MS)
        wait_host_unread(web, garden, 0)
        assert first_watch.problems == []
        assert second_watch.problems == []


def test_done_on_the_card_in_one_tab_closes_the_notification_in_the_other(
    browser: Browser, tmp_path: Path
) -> None:
    script = reminder_script(tmp_path / "script.json", "call mum")
    with (
        WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web,
        spied_context(browser) as laptop,
        spied_context(browser) as desktop,
    ):
        family = named_session(web, "Family")
        first, first_watch = watched(laptop)
        second, second_watch = watched(desktop)
        open_in(first, web, family)
        here = new_session(second, web)
        for tab in (first, second):
            notify_me(tab)
            tab.evaluate(LOOK_AWAY)

        ask_for_reminder(web, family, "call mum")
        for tab in (first, second):
            title_counts(tab, 1)
            expect(badge(tab, family)).to_have_text("1", timeout=WAIT_MS)
            assert [(n["title"], n["closed"]) for n in notified(tab)] == [
                ("Family · call mum", False)
            ]
        assert host_unread(web, family) == 1

        card = first.locator(f"{CARD} [data-role=schedule-reminder]")
        card.locator("[data-action=done]").click()
        expect(card).to_have_attribute("data-state", "done", timeout=WAIT_MS)
        for tab in (second, first):
            tab.wait_for_function("() => window.__notifications.every((note) => note.closed)")
            assert len(notifications(tab)) == 1
            expect(badge(tab, family)).to_have_text("", timeout=WAIT_MS)
            title_counts_nothing(tab)
        wait_host_unread(web, family, 0)
        expect(entry(second, here)).to_have_attribute("aria-current", "true", timeout=WAIT_MS)
        assert first_watch.problems == []
        assert second_watch.problems == []


def test_tabs_left_open_across_a_restart_count_a_later_reminder_and_snooze_it(
    browser: Browser, tmp_path: Path
) -> None:
    script = reminder_script(tmp_path / "script.json", "stretch")
    port = free_port()
    with (
        WebHost.start(
            tmp_path / "data", model=f"scripted:{script}", extra_args=["--port", str(port)]
        ) as web,
        spied_context(browser) as context,
    ):
        first, first_watch = watched(context)
        second, second_watch = watched(context)
        # Titled, so it is stored and still there after the restart; no model turn (the
        # scripted model starts its replies again with the new process).
        here = named_session(web, "Here")
        open_in(first, web, here)
        open_in(second, web, here)

        web.restart(graceful=True)
        for tab in (first, second):
            # The open conversation's stream is back: the restart left it closed.
            expect(tab.locator("[data-role=session-badge]")).to_have_attribute(
                "data-badge", "cold", timeout=WAIT_MS
            )
        errands = named_session(web, "Errands")
        ask_for_reminder(web, errands, "stretch")
        for tab in (first, second):
            expect(badge(tab, errands)).to_have_text("1", timeout=WAIT_MS)
            title_counts(tab, 1)
        assert host_unread(web, errands) == 1

        first.bring_to_front()
        entry(first, errands).locator("[data-action=open]").click()
        card = first.locator(f"{CARD} [data-role=schedule-reminder]")
        card.locator("[data-action=snooze][data-seconds='600']").click()
        expect(card).to_have_attribute("data-state", "snoozed", timeout=WAIT_MS)
        reminders = first.locator("[data-role=reminders] [data-reminder-id]")
        expect(reminders).to_have_count(1, timeout=WAIT_MS)
        expect(reminders.locator("[data-role=reminder-prompt]")).to_have_text(
            "stretch", timeout=WAIT_MS
        )
        (snooze,) = wait_for(
            lambda: (
                [line for line in web.stored_log(errands) if line.get("type") == "schedule/snooze"]
                or None
            ),
            what="the stored snooze",
        )
        dispatches = [
            line
            for line in web.stored_log(errands)
            if line.get("type") == "schedule/change" and line["data"].get("change") == "dispatch"
        ]
        assert [line["seq"] for line in dispatches] == [snooze["data"]["dispatchSeq"]]
        expect(reminders).to_have_attribute(
            "data-reminder-id", snooze["data"]["id"], timeout=WAIT_MS
        )
        expect(badge(second, errands)).to_have_text("", timeout=WAIT_MS)
        wait_host_unread(web, errands, 0)
        assert only_network_complaints(first_watch) == []
        assert only_network_complaints(second_watch) == []


# What a browser does to a tab the reader left for another: `document.hidden`,
# a `visibilitychange`, and no animation frames until it is shown again
# (headless Chromium keeps every tab visible, so the test says it).
HIDE = """() => {
  window.__heldFrames = [];
  window.__realFrame = window.requestAnimationFrame;
  window.requestAnimationFrame = (fn) => window.__heldFrames.push(fn);
  Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
  document.dispatchEvent(new Event("visibilitychange"));
}"""
SHOW = """() => {
  delete document.hidden;
  delete document.visibilityState;
  window.requestAnimationFrame = window.__realFrame;
  for (const fn of window.__heldFrames.splice(0)) window.requestAnimationFrame(fn);
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def test_a_hidden_tab_counts_in_its_title_and_reads_the_open_conversation_once_shown(
    browser: Browser, tmp_path: Path
) -> None:
    script = reminder_script(tmp_path / "script.json", "stretch")
    with (
        WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web,
        spied_context(browser) as context,
    ):
        garden = named_session(web, "Garden")
        page, watch = watched(context)
        open_in(page, web, garden)
        notify_me(page)
        page.evaluate(HIDE)

        ask_for_reminder(web, garden, "stretch")
        page.wait_for_function("() => document.title.startsWith('(1) ')", polling=100)
        assert [note["title"] for note in notified(page, polling=100)] == ["Garden · stretch"]
        page.wait_for_timeout(300)  # nobody looks: nothing is read
        assert host_unread(web, garden) == 1

        page.evaluate(SHOW)
        expect(page.locator(CARD)).to_have_count(1, timeout=WAIT_MS)
        title_counts_nothing(page)
        wait_host_unread(web, garden, 0)
        assert [note["closed"] for note in notifications(page)] == [True]
        assert watch.problems == []
