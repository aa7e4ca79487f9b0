"""XSS payloads everywhere text reaches the page, rendered by a real Chromium.

`dsh web` runs with a scripted model whose replies and tool calls carry
classic payloads (`<img src=x onerror=…>`, `<script>`, `"><svg onload=…>`,
`javascript:` URLs, a markdown link, an iframe, a template expression, a
style block); the user types more into the composer. The payloads travel
through every renderer: the user bubble, assistant text, tool-call names and
arguments, a tool error's message, the reminder receipt drawn by the
client-ui-schedule plugin (its prompt is a payload) and the follow-up turn.
The page is checked live, then again after a reload (history rendering):

- no dialog ever opened and no CSP violation was reported;
- no injected element exists (no `img[src=x]`, `svg`, `iframe`, inline
  `script`, `style` or `javascript:` link; no `on*` attribute anywhere);
- each payload is shown as text, verbatim (JSON-escaped inside argument dumps).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.webhost import WebHost

from .figures import Figures

pytestmark = [pytest.mark.reliability, pytest.mark.browser]

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 20_000

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
SVG = '"><svg onload=alert(3)>'
JS_URL = "javascript:alert(4)"
ANCHOR = '<a href="javascript:alert(5)">click me</a>'
MARKDOWN = "[link](javascript:alert(6))"
IFRAME = '<iframe src="javascript:alert(7)"></iframe>'
QUOTED = "'\"><img src=x onerror=alert(8)>"
TEMPLATE = '{{constructor.constructor("alert(9)")()}}'
STYLE = "<style>*{display:none}</style>"
PAYLOADS = (IMG, SCRIPT, SVG, JS_URL, ANCHOR, MARKDOWN, IFRAME, QUOTED, TEMPLATE, STYLE)

USER_TEXT = f"hello {IMG} {SCRIPT}"
REPLY_TEXT = f"{SVG} {JS_URL} {ANCHOR}"
PROMPT = f"{IMG}{SCRIPT}{SVG}"
TOOL_NAME = QUOTED
ARGUMENTS = {"x": IFRAME, "y": MARKDOWN}
AFTER_TOOLS = f"{MARKDOWN} {IFRAME} {TEMPLATE} {STYLE}"
REMINDER_REPLY = f"{SCRIPT} {QUOTED}"

INJECTED = """() => {
  const found = [];
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      const where = `${element.tagName}[${attribute.name}]`;
      if (attribute.name.toLowerCase().startsWith('on')) found.push(where);
      if (/^\\s*javascript:/i.test(attribute.value)) found.push(`${where}=javascript:`);
    }
  }
  const selectors = ['img[src="x"]', 'svg', 'iframe', 'a[href^="javascript"]', 'body style',
                     'script:not([src])', '[data-role=transcript] script'];
  for (const selector of selectors) {
    for (const element of document.querySelectorAll(selector)) found.push(selector);
  }
  return found;
}"""

WATCH_CSP = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation',
  (event) => window.__cspViolations.push(event.violatedDirective + ' ' + event.blockedURI));
"""


def script_file(folder: Path) -> Path:
    replies = [
        {
            "text": REPLY_TEXT,
            "toolCalls": [
                {"name": "schedule_create", "arguments": {"prompt": PROMPT, "after_seconds": 1}},
                {"name": TOOL_NAME, "arguments": ARGUMENTS},
            ],
        },
        {"text": AFTER_TOOLS},
        {"text": REMINDER_REPLY},
    ]
    path = folder / "xss-script.json"
    path.write_text(json.dumps(replies), "utf-8")
    return path


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebHost]:
    root = tmp_path_factory.mktemp("xss")
    with WebHost.start(root / "data", model=f"scripted:{script_file(root)}") as running:
        yield running


def expected_texts() -> list[str]:
    """What must appear as text somewhere in the transcript."""
    dumped = [json.dumps(value, ensure_ascii=False)[1:-1] for value in ARGUMENTS.values()]
    return [USER_TEXT, REPLY_TEXT, AFTER_TOOLS, REMINDER_REPLY, PROMPT, TOOL_NAME, *dumped]


def record_dialog(dialogs: list[str], dialog: Any) -> None:
    dialogs.append(dialog.message)
    dialog.dismiss()


def check_page(page: Any, dialogs: list[str]) -> dict[str, int]:
    injected = page.evaluate(INJECTED)
    assert injected == [], injected
    assert dialogs == [], dialogs
    assert page.evaluate("window.__cspViolations") == []
    scripts = page.evaluate("[...document.scripts].map((s) => s.getAttribute('src'))")
    assert scripts == ["/static/app.js"], scripts
    transcript = page.locator("[data-role=transcript]").text_content() or ""
    missing = [text for text in expected_texts() if text not in transcript]
    assert not missing, missing
    card = page.locator("[data-role=schedule-reminder]").first.text_content() or ""
    assert PROMPT in card
    return {
        "texts_verbatim": len(expected_texts()),
        "elements_scanned": page.evaluate("document.querySelectorAll('*').length"),
    }


def test_payloads_in_prompts_tool_arguments_and_plugin_views_render_as_text(
    web: WebHost, figures: Figures
) -> None:
    from playwright.sync_api import sync_playwright

    dialogs: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.add_init_script(WATCH_CSP)
            page.on("dialog", lambda dialog: record_dialog(dialogs, dialog))
            page.goto(web.page_url)
            page.click("[data-role=new-session]")
            page.fill("[data-role=composer]", USER_TEXT)
            page.click("[data-role=send]")
            page.wait_for_selector("[data-role=schedule-reminder]")
            page.get_by_text("alert(8)>", exact=False).last.wait_for()
            page.wait_for_function(
                "(text) => document.querySelector('[data-role=transcript]').textContent"
                ".includes(text)",
                arg=REMINDER_REPLY,
            )
            live = check_page(page, dialogs)
            page.reload()
            page.wait_for_selector("[data-role=schedule-reminder]")
            page.wait_for_function(
                "(text) => document.querySelector('[data-role=transcript]')?.textContent"
                ".includes(text)",
                arg=REMINDER_REPLY,
            )
            reloaded = check_page(page, dialogs)
        finally:
            browser.close()
    section = figures.section("security")
    section["xss_payloads"] = len(PAYLOADS)
    section["xss_renders_checked"] = 2
    section["xss_texts_verbatim"] = live["texts_verbatim"] + reloaded["texts_verbatim"]
    section["xss_dialogs"] = len(dialogs)
    section["xss_injected_elements"] = 0
