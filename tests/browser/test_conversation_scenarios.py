"""The conversation page as a person uses it, in Debian's Chromium against a real `dsh web`:
markdown answers, the new-messages pill, retrying a send the host never got, and the keyboard.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import (
    WAIT_MS,
    free_port,
    new_session,
    only_network_complaints,
    send,
    write_script,
)

pytestmark = pytest.mark.browser

CODE = 'print("<b>hi</b>")  # a line long enough to need scrolling ' + "x" * 120
MARKDOWN = f"""# Plan

Here is **bold**, *em*, `inline <i>`, ~~gone~~, a [link](https://example.org/docs "Docs") \
and https://example.com/auto.

- one
- two
  1. nested

> quoted

| Name | Qty |
|:-----|----:|
| tea  | 2   |

```python
{CODE}
```

Bad: [x](javascript:alert(1)) [y](data:text/html,<script>alert(2)</script>) \
<img src=x onerror=alert(3)>
"""


def in_transcript(page: Page, text: str) -> Locator:
    return page.locator("[data-role=transcript]").get_by_text(text, exact=True)


def stored_user_texts(web: WebHost, session_id: str) -> list[str]:
    return [
        event["data"]["text"]
        for event in web.all_events(session_id)["events"]
        if event["type"] == "message/user"
    ]


def test_markdown_answers_render_as_elements_with_safe_links_and_copyable_code(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.json", [{"text": MARKDOWN}])
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=web.base_url)
        new_session(page, web)
        send(page, "show me **markdown**")
        answer = page.locator('[data-event-type="message/assistant"] [data-role=answer]')
        expect(answer).to_have_count(1, timeout=WAIT_MS)

        expect(answer.locator("h1")).to_have_text("Plan")
        expect(answer.locator("strong")).to_have_text("bold")
        expect(answer.locator("em")).to_have_text("em")
        expect(answer.locator("p > code")).to_have_text("inline <i>")
        expect(answer.locator("del")).to_have_text("gone")
        expect(answer.locator("ul > li")).to_have_count(2)
        expect(answer.locator("ul ol > li")).to_have_text("nested")
        expect(answer.locator("blockquote")).to_have_text("quoted")
        expect(answer.locator("table th")).to_have_text(["Name", "Qty"])
        expect(answer.locator("table td.align-right")).to_have_text("2")
        links = answer.locator("a")
        expect(links).to_have_count(2)
        for index, href in enumerate(["https://example.org/docs", "https://example.com/auto"]):
            expect(links.nth(index)).to_have_attribute("href", href)
            expect(links.nth(index)).to_have_attribute("rel", "noopener noreferrer")
            expect(links.nth(index)).to_have_attribute("target", "_blank")

        code = answer.locator("pre > code")
        expect(code).to_have_text(CODE)
        style = code.evaluate(
            """(el) => ({font: getComputedStyle(el).fontFamily,
                        overflow: getComputedStyle(el.parentElement).overflowX,
                        scrolls: el.parentElement.scrollWidth > el.parentElement.clientWidth})"""
        )
        assert "monospace" in style["font"], style
        assert style["overflow"] == "auto" and style["scrolls"], style
        copy = answer.locator("[data-role=code-block] [data-action=copy]")
        copy.click()
        expect(copy).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == CODE

        # Hostile links and HTML stayed text; the person's own message is not markdown.
        text = answer.text_content() or ""
        assert "[x](javascript:alert(1))" in text
        assert "<img src=x onerror=alert(3)>" in text
        assert page.locator("a[href^=javascript], a[href^=data], img[src=x]").count() == 0
        expect(page.locator('[data-event-type="message/user"] .bubble')).to_have_text(
            "show me **markdown**"
        )
        assert watch.problems == []


def test_new_events_below_the_fold_show_a_pill_and_the_readers_own_send_follows_the_bottom(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    long_answer = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(60))
    replies = [{"text": long_answer}, {"text": "A reply that arrived below."}, {"text": "Mine."}]
    script = write_script(tmp_path / "script.json", replies)
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        session_id = new_session(page, web)
        send(page, "write a lot")
        expect(in_transcript(page, "Paragraph 59 of a long answer.")).to_be_visible(timeout=WAIT_MS)
        transcript = page.locator("[data-role=transcript]")
        pill = page.locator("[data-role=new-messages]")
        expect(pill).to_be_hidden()

        transcript.evaluate("(el) => { el.scrollTop = 0; }")
        # Another tab (here: the API) sends a message; its answer lands below the fold.
        response = web.post(f"/api/sessions/{session_id}/messages", {"text": "from elsewhere"})
        assert response.status_code == 202
        expect(in_transcript(page, "A reply that arrived below.")).to_have_count(1, timeout=WAIT_MS)
        expect(pill).to_be_visible()
        assert transcript.evaluate("(el) => el.scrollTop") == 0, "the reader was left in place"
        pill.click()
        expect(pill).to_be_hidden()
        at_bottom = "(el) => el.scrollHeight - el.scrollTop - el.clientHeight < 2"
        page.wait_for_function(
            f"() => ({at_bottom})(document.querySelector('[data-role=transcript]'))"
        )

        transcript.evaluate("(el) => { el.scrollTop = 0; }")
        send(page, "my own message")
        page.wait_for_function(
            f"() => ({at_bottom})(document.querySelector('[data-role=transcript]'))"
        )
        expect(in_transcript(page, "Mine.")).to_have_count(1, timeout=WAIT_MS)
        assert transcript.evaluate(at_bottom)
        expect(pill).to_be_hidden()
        assert watch.problems == []


def test_a_send_the_host_never_got_keeps_its_text_and_retry_stores_it_once_the_host_is_back(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.json", [{"text": "Got it."}])
    # A fixed port: the host must come back where the open page expects it.
    port = free_port()
    with WebHost.start(
        tmp_path / "data", model=f"scripted:{script}", extra_args=["--port", str(port)]
    ) as web:
        session_id = new_session(page, web)
        web.kill()
        send(page, "did you get this?")
        failed = page.locator("[data-role=pending][data-state=failed]")
        expect(failed).to_have_count(1, timeout=WAIT_MS)
        expect(failed).to_contain_text("did you get this?")
        expect(failed).to_contain_text("dsh web did not answer")
        expect(failed.locator("[data-action=retry]")).to_be_visible()

        web.restart()
        failed.locator("[data-action=retry]").click()
        texts = wait_for(
            lambda: stored_user_texts(web, session_id) or None, what="the retried message"
        )
        assert texts == ["did you get this?"]
        expect(page.locator("[data-role=pending]")).to_have_count(0, timeout=WAIT_MS)
        expect(page.locator('[data-event-type="message/user"] .bubble')).to_have_text(
            "did you get this?"
        )
        expect(in_transcript(page, "Got it.")).to_have_count(1, timeout=WAIT_MS)
        assert only_network_complaints(watch) == []


def test_keyboard_new_session_focus_shortcuts_help_and_the_message_menu(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    script = write_script(tmp_path / "script.json", [{"text": "First answer."}])
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        page.goto(web.page_url)
        page.locator("[data-role=new-session]").click()
        composer = page.locator("[data-role=composer]")
        expect(composer).to_be_focused()
        composer.fill("hello")
        composer.press("Enter")
        answer = page.locator('[data-event-type="message/assistant"]')
        expect(answer).to_contain_text("First answer.", timeout=WAIT_MS)
        parent = page.locator("[data-role=session-list] [aria-current=true]").get_attribute(
            "data-session-id"
        )

        page.keyboard.press("Control+k")
        expect(page.locator("[data-role=session-search]")).to_be_focused()
        page.locator("[data-role=new-session]").focus()
        page.keyboard.press("/")
        expect(composer).to_be_focused()
        composer.blur()
        page.keyboard.press("?")
        help_dialog = page.locator("dialog[data-role=help]")
        expect(help_dialog).to_be_visible()
        expect(help_dialog.locator("[data-shortcut]")).to_have_count(9)
        page.keyboard.press("Escape")
        expect(help_dialog).to_have_count(0)

        # The transcript is one tab stop: the newest message; Enter opens its menu.
        stops = page.evaluate(
            "[...document.querySelectorAll('[data-role=transcript] [data-message]')]"
            ".filter((el) => el.tabIndex === 0).length"
        )
        assert stops == 1
        assert page.locator("[data-role=message-actions] button[tabindex='0']").count() == 0
        answer.focus()
        page.keyboard.press("Enter")
        menu = answer.locator("[data-role=message-menu]")
        expect(menu).to_be_visible()
        page.keyboard.press("ArrowDown")
        expect(menu.locator("[data-action=fork]")).to_be_focused()
        page.keyboard.press("Enter")
        current = page.locator("[data-role=session-list] [aria-current=true]")
        expect(current).not_to_have_attribute("data-session-id", parent or "")
        expect(current.locator("[data-role=fork]")).to_have_text("fork")
        expect(current.locator("[data-role=fork-of]")).to_contain_text("fork of “")

        page.keyboard.press("Control+Shift+O")
        expect(page.locator("[data-role=session-list] [data-session-id]")).to_have_count(3)
        expect(composer).to_be_focused()
        assert watch.problems == []
