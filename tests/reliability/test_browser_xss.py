"""XSS payloads everywhere text reaches the page, rendered by a real Chromium.

`dsh web` runs with a scripted model whose replies and tool calls carry
classic payloads (`<img src=x onerror=…>`, `<script>`, `"><svg onload=…>`,
`javascript:` URLs, a markdown link, an iframe, a template expression, a
style block); the user types more into the composer. The payloads travel
through every renderer: the user bubble, assistant text (rendered as
markdown), tool-call names and arguments, a tool error's message, the
reminder receipt drawn by the client-ui-schedule plugin (its prompt is a
payload) and the follow-up turn. A markdown answer adds the hostile markdown:
links to `javascript:` and `data:` URLs, HTML inside emphasis, code spans and
fenced code, and emphasis nested around HTML.
The page is checked live, then again after a reload (history rendering):

- no dialog ever opened and no CSP violation was reported;
- no injected element exists (no `img[src=x]`, `svg`, `iframe`, inline
  `script`, `style` or `javascript:` link; no `on*` attribute anywhere);
- each payload is shown as text, verbatim (JSON-escaped inside argument dumps);
- markdown renders as its elements, and the only link is the one safe link,
  opening in a new tab without referrer or opener.
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
MD_DATA_LINK = "[data](data:text/html,<script>alert(12)</script>)"
MD_ANGLE = "<javascript:alert(13)>"
# Hostile markdown: HTML in emphasis, in a code span and in fenced code, a data: link,
# a javascript: autolink, emphasis nested around HTML.
MD_PAYLOADS = 6
MD_TEXT = (
    "**bold <img src=x onerror=alert(10)>** "
    "`<script>alert(11)</script>` "
    f"{MD_DATA_LINK} {MD_ANGLE} "
    "*nested **deep <svg onload=alert(14)>*** "
    '[ok](https://example.org/safe "fine")\n\n'
    "```html\n<iframe src=javascript:alert(15)></iframe>\n```"
)
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
  const selectors = ['img[src="x"]', 'svg', 'iframe', 'a[href^="javascript"]', 'a[href^="data"]',
                     'a[href^="vbscript"]', 'body style',
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
        {"text": f"{AFTER_TOOLS}\n\n{MD_TEXT}"},
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
    return [
        USER_TEXT,
        REPLY_TEXT,
        AFTER_TOOLS,
        REMINDER_REPLY,
        PROMPT,
        TOOL_NAME,
        MD_DATA_LINK,
        MD_ANGLE,
        *dumped,
    ]


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
    check_markdown(page)
    return {
        "texts_verbatim": len(expected_texts()),
        "elements_scanned": page.evaluate("document.querySelectorAll('*').length"),
    }


MARKDOWN_RENDERED = """() => {
  const answers = [...document.querySelectorAll('[data-role=transcript] [data-role=answer]')];
  const answer = answers.find((el) => el.querySelector('pre'));
  if (!answer) return null;
  const text = (selector) => [...answer.querySelectorAll(selector)].map((el) => el.textContent);
  return {
    strong: text('strong'),
    em: text('em'),
    code: text('p code'),
    pre: text('pre code'),
    links: [...document.querySelectorAll('[data-role=transcript] a')].map((a) =>
      [a.getAttribute('href'), a.getAttribute('rel'), a.getAttribute('target'), a.textContent]),
  };
}"""


def check_markdown(page: Any) -> None:
    """Hostile markdown rendered as its elements, with the payloads inside them as text."""
    rendered = page.evaluate(MARKDOWN_RENDERED)
    assert rendered is not None, "the markdown answer is on the page"
    assert "bold <img src=x onerror=alert(10)>" in rendered["strong"]
    assert "<script>alert(11)</script>" in rendered["code"]
    assert any(
        "deep <svg onload=alert(14)>" in text for text in rendered["strong"] + rendered["em"]
    )
    assert rendered["pre"] == ["<iframe src=javascript:alert(15)></iframe>"]
    assert rendered["links"] == [
        ["https://example.org/safe", "noopener noreferrer", "_blank", "ok"]
    ]


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
    section["xss_markdown_payloads"] = MD_PAYLOADS
    section["xss_renders_checked"] = 2
    section["xss_texts_verbatim"] = live["texts_verbatim"] + reloaded["texts_verbatim"]
    section["xss_dialogs"] = len(dialogs)
    section["xss_injected_elements"] = 0
