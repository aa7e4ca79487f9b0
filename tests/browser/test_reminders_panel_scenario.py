"""A person is reminded, in Debian's Chromium against a real `dsh web`.

- The scripted model sets two reminders; the panel shows both with a live
  countdown; one is deleted from the panel (a `delete` is stored); the other
  fires while the page is unfocused: the tab title counts it, exactly one
  system notification names it (permission granted in the browser context,
  asked for only by "Notify me"), and the transcript shows it once — one card
  holding the text the model was given, no bubble of its own.
- `dsh web` without `DSH_TOKEN` keeps its token in the data dir: after a
  SIGTERM restart the tab left open reconnects by itself, says the Session is
  cold and that its reminder waits, and a message sent from that same tab is
  stored (and delivers the reminder). After `--new-token` the same tab says
  the token was refused and takes the new address without a reload.
- The reminder plugin's module arrives only after the person opened a
  conversation (a loaded host): its panel still joins that conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import free_port, new_session, only_network_complaints, send, write_script
from .test_theme_contrast import assert_readable, measure

pytestmark = pytest.mark.browser

WAIT_MS = 20_000
# Records every notification the page makes (the real one still shows) and
# every permission request, so the test can tell "asked on load" from a click.
NOTIFICATION_SPY = """
(() => {
  const Real = window.Notification;
  if (typeof Real !== "function") return;
  window.__notifications = [];
  window.__permissionRequests = 0;
  class Recorded extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notifications.push({ title, body: options?.body ?? "" });
      window.__lastNotification = this;
    }
  }
  Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
  Recorded.requestPermission = (...args) => {
    window.__permissionRequests += 1;
    return Real.requestPermission(...args);
  };
  window.Notification = Recorded;
})();
"""
LOOK_AWAY = "() => { document.hasFocus = () => false; window.dispatchEvent(new Event('blur')); }"
LOOK_BACK = "() => { delete document.hasFocus; window.dispatchEvent(new Event('focus')); }"


def stored(web: WebHost, session_id: str) -> list[dict[str, Any]]:
    return [line for line in web.stored_log(session_id) if "seq" in line]


def changes(web: WebHost, session_id: str, change: str) -> list[dict[str, Any]]:
    return [
        event
        for event in stored(web, session_id)
        if event["type"] == "schedule/change" and event["data"].get("change") == change
    ]


def test_the_panel_counts_down_deletes_and_a_reminder_fired_while_away_is_told_once(
    browser: Browser, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    script = write_script(
        tmp_path / "script.json",
        [
            {
                "text": "Two reminders.",
                "toolCalls": [
                    {
                        "name": "schedule_create",
                        "arguments": {"prompt": "tea", "after_seconds": 1800},
                    },
                    {
                        "name": "schedule_create",
                        "arguments": {"prompt": "stretch", "after_seconds": 6},
                    },
                ],
            },
            {"text": "Both are set."},
            {"text": "Time to stretch!"},
        ],
    )
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        context = browser.new_context(
            viewport={"width": 1280, "height": 800}, locale="en-US", timezone_id="Asia/Tokyo"
        )
        context.set_default_timeout(WAIT_MS)
        context.grant_permissions(["notifications"], origin=web.base_url)
        context.add_init_script(NOTIFICATION_SPY)
        page = context.new_page()
        watch = PageWatch().attach(page)
        try:
            session_id = new_session(page, web)
            assert page.evaluate("window.__permissionRequests") == 0, "never asked on load"
            notify = page.locator("[data-role=notify]")
            notify.click()
            expect(notify).to_have_attribute("data-state", "on", timeout=WAIT_MS)

            send(page, "remind me about tea in half an hour and to stretch in a few seconds")
            panel = page.locator("[data-role=reminders]")
            expect(panel.locator("[data-reminder-id]")).to_have_count(2, timeout=WAIT_MS)
            tea = panel.locator('[data-reminder-id="rem-1"]')
            expect(tea.locator("[data-role=reminder-prompt]")).to_have_text("tea", timeout=WAIT_MS)
            expect(tea.locator("[data-role=reminder-rule]")).to_have_text("Once", timeout=WAIT_MS)
            (create_tea, _) = changes(web, session_id, "create")
            next_at = create_tea["data"]["record"]["nextAt"]
            expect(tea.locator("[data-role=reminder-next]")).to_have_attribute(
                "datetime", next_at, timeout=WAIT_MS
            )
            countdown = tea.locator("[data-role=reminder-countdown]")
            first = countdown.text_content()
            assert first in {"in 30:00", "in 29:59", "in 29:58"}
            page.wait_for_function(
                '(before) => document.querySelector(\'[data-reminder-id="rem-1"] '
                "[data-role=reminder-countdown]').textContent !== before",
                arg=first,
            )
            shot = tmp_path / "panel.png"
            panel.screenshot(path=str(shot))
            artifact(shot)

            tea.locator("[data-action=ask-delete]").click()
            tea.locator("[data-action=delete]").click()
            expect(panel.locator("[data-reminder-id]")).to_have_count(1, timeout=WAIT_MS)
            (deleted,) = wait_for(lambda: changes(web, session_id, "delete") or None)
            assert deleted["data"]["id"] == "rem-1"

            page.evaluate(LOOK_AWAY)
            page.wait_for_function("() => document.title.startsWith('(1) ')", timeout=WAIT_MS)
            notes = page.evaluate("window.__notifications")
            # The host's alert (WS /api/live), under the conversation's title.
            assert [note["title"].split(" · ")[-1] for note in notes] == ["stretch"]
            assert notes[0]["title"].startswith("remind me about tea")
            assert notes[0]["body"].startswith("Due at ")

            # The transcript shows the reminder once: one card, holding the follow-up.
            card = page.locator('[data-event-type="schedule/change"][data-view]')
            expect(card).to_have_count(1, timeout=WAIT_MS)
            (dispatch,) = changes(web, session_id, "dispatch")
            followups = [
                event
                for event in stored(web, session_id)
                if event["type"] == "message/user" and event["data"]["source"]["kind"] == "schedule"
            ]
            assert [event["data"]["source"]["dispatchSeq"] for event in followups] == [
                dispatch["seq"]
            ]
            expect(card).to_have_attribute(
                "data-followup-seq", str(followups[0]["seq"]), timeout=WAIT_MS
            )
            disclosure = card.locator("[data-role=followup]")
            expect(disclosure).not_to_have_attribute("open", "", timeout=WAIT_MS)
            assert "[Scheduled reminder]" in (disclosure.text_content() or "")
            expect(page.locator('[data-event-type="message/user"] .bubble')).to_have_count(
                1, timeout=WAIT_MS
            )
            expect(page.locator("[data-role=transcript]")).to_contain_text(
                "Time to stretch!", timeout=WAIT_MS
            )
            transcript = page.locator("[data-role=transcript]")
            assert transcript.get_by_text("stretch", exact=True).count() == 1
            expect(panel.locator("[data-reminder-id]")).to_have_count(0, timeout=WAIT_MS)
            page.wait_for_timeout(300)  # nothing is told twice, even across redraws
            assert len(page.evaluate("window.__notifications")) == 1

            page.evaluate(LOOK_BACK)
            page.wait_for_function("() => !document.title.startsWith('(')")
            shot = tmp_path / "delivered.png"
            page.screenshot(path=str(shot))
            artifact(shot)
            assert watch.problems == []
        finally:
            context.close()


def test_a_tab_left_open_across_a_restart_reconnects_says_what_waits_and_keeps_sending(
    browser: Browser, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    script = write_script(
        tmp_path / "script.json",
        [
            {
                "text": "好的。",
                "toolCalls": [
                    {"name": "schedule_create", "arguments": {"prompt": "喝水", "after_seconds": 4}}
                ],
            },
            {"text": "已设置。"},
            {"text": "收到。"},
            {"text": "该喝水了！"},
        ],
    )
    port = free_port()
    data = tmp_path / "data"
    with WebHost.start(
        data, model=f"scripted:{script}", token=None, extra_args=["--port", str(port)]
    ) as web:
        kept = (data / "token").read_text(encoding="ascii").strip()
        assert kept == web.printed_token
        assert (data / "token").stat().st_mode & 0o777 == 0o600
        context = browser.new_context(
            viewport={"width": 375, "height": 812},
            locale="zh-CN",
            timezone_id="America/New_York",
            is_mobile=True,
            has_touch=True,
        )
        context.set_default_timeout(WAIT_MS)
        page = context.new_page()
        watch = PageWatch().attach(page)
        try:
            page.goto(web.page_url)
            page.locator("[data-role=menu]").click()
            page.locator("[data-role=new-session]").click()
            expect(page.locator("[data-role=transcript]")).to_have_attribute(
                "data-status", "live", timeout=WAIT_MS
            )
            session_id = page.evaluate("decodeURIComponent(location.hash.slice(4))")
            send(page, "4秒后提醒我喝水")
            expect(page.locator("[data-reminder-id]")).to_have_count(1, timeout=WAIT_MS)
            expect(page.locator("[data-role=transcript]")).to_contain_text(
                "已设置。", timeout=WAIT_MS
            )

            # SIGTERM, the tab left open; the reminder comes due while nobody runs the Session.
            web.terminate()
            expect(page.locator("[data-role=status]")).to_have_attribute(
                "data-state", "reconnecting", timeout=WAIT_MS
            )
            wait_for(
                lambda: page.evaluate(
                    "() => [...document.querySelectorAll('[data-role=reminder-countdown]')]"
                    ".some((el) => el.textContent === '已到时间'"
                    " || el.textContent.startsWith('晚了'))"
                ),
                what="the reminder to come due",
            )
            web.boot()
            assert web.printed_token == kept, "the same token after a restart"
            badge = page.locator("[data-role=session-badge]")
            expect(badge).to_have_attribute("data-badge", "cold", timeout=WAIT_MS)
            expect(page.locator("[data-role=status]")).to_be_hidden(timeout=WAIT_MS)
            expect(page.locator("header [data-role=session-status]")).to_have_text(
                "🔔 1 个提醒待送达", timeout=WAIT_MS
            )
            expect(page.locator("[data-role=reminders-waiting]")).to_contain_text(
                "对话重新打开后", timeout=WAIT_MS
            )
            shot = tmp_path / "waiting.png"
            page.screenshot(path=str(shot))
            artifact(shot)
            # The list says it too.
            page.locator("[data-role=menu]").click()
            entry = page.locator(f'[data-role=session-list] [data-session-id="{session_id}"]')
            expect(entry.locator("[data-role=session-status]")).to_have_text(
                "🔔 1 个提醒待送达", timeout=WAIT_MS
            )
            page.keyboard.press("Escape")

            # The same tab sends: stored, and the Session is live again and delivers.
            send(page, "我回来了")
            texts = wait_for(
                lambda: (
                    [
                        event["data"]["text"]
                        for event in stored(web, session_id)
                        if event["type"] == "message/user"
                        and event["data"]["source"]["kind"] == "user"
                    ][1:]
                    or None
                ),
                what="the message sent after the restart",
            )
            assert texts == ["我回来了"]
            expect(badge).to_have_attribute("data-badge", "live", timeout=WAIT_MS)
            expect(page.locator('[data-event-type="schedule/change"][data-view]')).to_have_count(
                1, timeout=WAIT_MS
            )
            expect(page.locator("[data-role=pending]")).to_have_count(0, timeout=WAIT_MS)

            # A restart with --new-token: the same tab is told, and takes the new address.
            web.extra_args = ["--port", str(port), "--new-token"]
            web.restart(graceful=True)
            assert web.printed_token != kept
            prompt = page.locator("[data-role=token-prompt]")
            expect(prompt).to_be_visible(timeout=30_000)
            expect(prompt).to_contain_text("拒绝了本页的访问令牌", timeout=WAIT_MS)
            prompt.locator("[data-role=token-input]").fill(web.page_url)
            prompt.locator("[data-action=use-token]").click()
            expect(prompt).to_be_hidden(timeout=WAIT_MS)
            # Reconnected (the restart left the Session cold).
            expect(page.locator("[data-role=transcript]")).to_have_attribute(
                "data-status", "cold", timeout=WAIT_MS
            )
            send(page, "新令牌可以用吗")
            wait_for(
                lambda: any(
                    event["type"] == "message/user" and event["data"]["text"] == "新令牌可以用吗"
                    for event in stored(web, session_id)
                ),
                what="the message sent with the new token",
            )
            assert page.evaluate("localStorage.getItem('dsh.token')") == web.printed_token
            # The browser's own line for the refused requests is all there is.
            problems = [
                problem
                for problem in only_network_complaints(watch)
                if "status of 401 (Unauthorized)" not in problem
            ]
            assert problems == []
        finally:
            context.close()


def test_the_kept_token_file_is_what_a_second_start_prints(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with WebHost.start(data, overlay=None, model="absent", token=None) as web:
        first = web.printed_token
        assert web.get("/api/health").status_code == 200
    with WebHost.start(data, overlay=None, model="absent", token=None) as web:
        assert web.printed_token == first
        assert json.loads(web.get("/api/health").text)["ok"] is True


# The panel's and the header's new texts, measured like the rest of the page
# (test_theme_contrast.py): each must be on the page and readable in both themes.
PANEL_TEXTS: list[tuple[str, str, str | None]] = [
    ("panel title", "[data-role=reminders] .panel-title", None),
    ("panel summary", "[data-role=reminders-next]", None),
    ("panel badge", "[data-role=reminders] .panel-badge", None),
    ("reminder prompt", "[data-role=reminder-prompt]", None),
    ("reminder rule", "[data-role=reminder-rule]", None),
    ("countdown, due", '[data-state="due"] [data-role=reminder-countdown]', None),
    ("paused label", "[data-role=reminder-paused]", None),
    ("snooze label", ".snooze-label", None),
    ("snooze button", "[data-action=snooze]", None),
    ("delete button", "[data-action=ask-delete]", None),
    ("waiting note", "[data-role=reminders-waiting] .panel-note-text", None),
    ("deliver now", "[data-action=resume-session]", None),
    ("header badge", "[data-role=session-badge]", None),
    ("header status", "header [data-role=session-status]", None),
    ("list status", "[data-role=session-list] [data-role=session-status]", None),
    ("notify me", "[data-role=notify]", None),
    ("sound", "[data-role=sound]", None),
    ("card follow-up", "[data-role=followup] summary", None),
]


def test_the_reminder_texts_keep_wcag_aa_contrast_in_both_themes(
    page: Page, watch: PageWatch, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    create = "schedule_create"
    script = write_script(
        tmp_path / "script.json",
        [
            {
                "text": "Three.",
                "toolCalls": [
                    {"name": create, "arguments": {"prompt": "now", "after_seconds": 2}},
                    {"name": create, "arguments": {"prompt": "soon", "after_seconds": 4}},
                    {"name": create, "arguments": {"prompt": "later", "after_seconds": 900}},
                ],
            },
            {"text": "Set."},
            {"text": "Delivered."},
        ],
    )
    port = free_port()
    with WebHost.start(
        tmp_path / "data", model=f"scripted:{script}", extra_args=["--port", str(port)]
    ) as web:
        page.emulate_media(color_scheme="light")
        new_session(page, web)
        send(page, "three reminders")
        expect(page.locator("[data-reminder-id]")).to_have_count(3, timeout=WAIT_MS)
        page.locator('[data-reminder-id="rem-3"] [data-action=pause]').click()
        expect(page.locator("[data-role=reminder-paused]")).to_have_count(1, timeout=WAIT_MS)
        expect(page.locator('[data-event-type="schedule/change"][data-view]')).to_have_count(
            1, timeout=WAIT_MS
        )
        web.terminate()  # rem-2 comes due while nothing runs the Session
        expect(page.locator('[data-state="due"]')).to_have_count(1, timeout=WAIT_MS)
        web.boot()
        expect(page.locator("[data-role=session-badge]")).to_have_attribute(
            "data-badge", "cold", timeout=WAIT_MS
        )
        expect(page.locator("[data-role=session-list] [data-role=session-status]")).to_have_count(
            1, timeout=WAIT_MS
        )
        report: dict[str, Any] = {}
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            results = measure(page, PANEL_TEXTS)
            report[scheme] = results
            shot = tmp_path / f"reminders-{scheme}.png"
            page.screenshot(path=str(shot))
            artifact(shot)
            assert_readable(results, scheme)
        figures = tmp_path / "contrast.json"
        figures.write_text(json.dumps(report, indent=2), encoding="utf-8")
        artifact(figures)
        assert only_network_complaints(watch) == []


def test_a_plugin_module_that_arrives_late_still_gives_the_open_conversation_its_panel(
    page: Page, tmp_path: Path
) -> None:
    held: list[Route] = []
    released = False

    def hold(route: Route) -> None:
        if released:
            route.continue_()
        else:
            held.append(route)  # answered below, once the conversation is open

    page.route("**/plugins/**", hold)
    with WebHost.start(tmp_path / "data", model="demo") as web:
        new_session(page, web)
        send(page, "remind me in 10 minutes to stretch")
        expect(page.locator("[data-role=transcript]")).to_contain_text(
            "Reminder rem-1 is set", timeout=WAIT_MS
        )
        assert held, "the page asked for the plugin's module"
        assert page.locator("[data-role=reminders]").count() == 0
        released = True
        for route in held:
            route.continue_()
        rows = page.locator("[data-role=reminders] [data-reminder-id]")
        expect(rows).to_have_count(1, timeout=WAIT_MS)
        expect(rows).to_contain_text("stretch")
