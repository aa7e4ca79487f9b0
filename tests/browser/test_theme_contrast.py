"""Light and dark themes in Debian's Chromium: every main text of the page keeps WCAG AA
contrast (4.5:1) against what it is drawn on, computed from the page's own styles; the
page follows `prefers-color-scheme`, and the toggle's pick survives a reload.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from tests.support.webhost import WebHost

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send, write_script

pytestmark = pytest.mark.browser

AA = 4.5
ANSWER = """Here is a [link](https://example.org), `inline code` and a table:

| Item | Qty |
|------|----:|
| tea  | 2   |

```sh
ls -la
```
"""

# (name, selector, pseudo-element): each must exist and be readable in both themes.
TEXTS: list[tuple[str, str, str | None]] = [
    ("brand", ".brand", None),
    ("sidebar heading", ".sidebar-title", None),
    ("new session button", "[data-role=new-session]", None),
    ("search placeholder", "[data-role=session-search]", "::placeholder"),
    ("open session title", ".session.current [data-role=session-title]", None),
    ("open session meta", ".session.current .session-meta", None),
    ("other session meta", ".session:not(.current) .session-meta", None),
    ("live badge", "[data-badge=live]", None),
    ("cold badge", "[data-badge=cold]", None),
    ("language, chosen", ".lang[aria-pressed=true]", None),
    ("language, other", ".lang[aria-pressed=false]", None),
    ("theme toggle", "[data-role=theme-toggle]", None),
    ("header title", "[data-role=title]", None),
    ("day separator", "[data-role=day-separator] span", None),
    ("who", '[data-event-type="message/assistant"] .who', None),
    ("user bubble", '[data-event-type="message/user"] .bubble', None),
    ("answer text", "[data-role=answer] p", None),
    ("answer link", "[data-role=answer] a", None),
    ("inline code", "[data-role=answer] p code", None),
    ("table header", "[data-role=answer] th", None),
    ("table cell", "[data-role=answer] td", None),
    ("code block", "[data-role=code-block] pre code", None),
    ("code language", "[data-role=code-block] .code-lang", None),
    ("copy button", "[data-role=code-block] [data-action=copy]", None),
    ("tool call", ".tool summary", None),
    ("failed message", ".pending-failed .pending-status", None),
    ("retry", ".pending-failed [data-action=retry]", None),
    ("dismiss", ".pending-failed [data-action=dismiss]", None),
    ("composer placeholder", "[data-role=composer]", "::placeholder"),
    ("send button", "[data-role=send]", None),
]
BANNER: list[tuple[str, str, str | None]] = [
    ("banner", "[data-role=banner] .banner-text", None),
    ("empty transcript notice", "[data-role=notice]", None),
]

MEASURE = """(texts) => {
  const parse = (value) => {
    const match = /rgba?\\(([^)]+)\\)/.exec(value);
    if (!match) return null;
    const [r, g, b, a = 1] = match[1].split(/[\\s,/]+/).filter(Boolean).map(Number);
    return { r, g, b, a };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  // What the element is drawn on: its own and its ancestors' backgrounds, composited.
  const backdrop = (element) => {
    const layers = [];
    for (let at = element; at; at = at.parentElement) {
      const color = parse(getComputedStyle(at).backgroundColor);
      if (color && color.a > 0) {
        layers.push(color);
        if (color.a >= 1) break;
      }
    }
    let color = { r: 255, g: 255, b: 255, a: 1 };
    for (const layer of layers.reverse()) color = over(layer, color);
    return color;
  };
  const opacity = (element) => {
    let value = 1;
    for (let at = element; at; at = at.parentElement) value *= Number(getComputedStyle(at).opacity);
    return value;
  };
  const luminance = ({ r, g, b }) => {
    const channel = (v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  };
  return texts.map(([name, selector, pseudo]) => {
    const element = document.querySelector(selector);
    if (!element) return { name, selector, missing: true };
    const bg = backdrop(element);
    const raw = parse(getComputedStyle(element, pseudo).color);
    const fg = over({ ...raw, a: raw.a * opacity(element) }, bg);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((x, y) => y - x);
    const rgb = (c) => `rgb(${Math.round(c.r)}, ${Math.round(c.g)}, ${Math.round(c.b)})`;
    return { name, selector, ratio: (hi + 0.05) / (lo + 0.05), fg: rgb(fg), bg: rgb(bg) };
  });
}"""


def measure(page: Page, texts: list[tuple[str, str, str | None]]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = page.evaluate(MEASURE, [list(text) for text in texts])
    return results


def assert_readable(results: list[dict[str, Any]], theme: str) -> None:
    missing = [result["name"] for result in results if result.get("missing")]
    assert not missing, f"{theme}: not on the page: {missing}"
    poor = [
        f"{r['name']}: {r['ratio']:.2f} ({r['fg']} on {r['bg']})"
        for r in results
        if r["ratio"] < AA
    ]
    assert not poor, f"{theme}: below WCAG AA {AA}:1: {poor}"


def effective_theme(page: Page) -> str:
    return str(
        page.evaluate(
            "getComputedStyle(document.documentElement).colorScheme.includes('dark')"
            " ? 'dark' : 'light'"
        )
    )


def fill_the_page(page: Page, web: WebHost) -> None:
    """A cold Session, a live one with markdown and a tool call, and a refused send."""
    cold = web.create_session()
    web.post(f"/api/sessions/{cold}/messages", {"text": "an older chat"})
    web.restart()
    new_session(page, web)
    send(page, "show me everything")
    expect(page.locator("[data-role=answer] table")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("[data-role=typing]")).to_have_count(0, timeout=WAIT_MS)

    def refuse(route: Route) -> None:
        route.fulfill(
            status=422,
            content_type="application/json",
            body=json.dumps({"error": {"code": "invalid_body", "message": "text: too long"}}),
        )

    page.route("**/messages", refuse)
    send(page, "this one is refused")
    expect(page.locator(".pending-failed")).to_have_count(1)
    page.unroute("**/messages")


def test_both_themes_keep_every_main_text_at_wcag_aa_contrast(
    page: Page, watch: PageWatch, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    replies = [
        {"text": "One moment.", "toolCalls": [{"name": "schedule_list", "arguments": {}}]},
        {"text": ANSWER},
    ]
    script = write_script(tmp_path / "script.json", replies)
    with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
        page.emulate_media(color_scheme="light")
        fill_the_page(page, web)
        expect(page.locator("[data-role=session-list] [data-session-id]")).to_have_count(2)

        report: dict[str, Any] = {}
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            assert effective_theme(page) == scheme, "the page follows prefers-color-scheme"
            results = measure(page, TEXTS)
            report[scheme] = results
            shot = tmp_path / f"theme-{scheme}.png"
            page.screenshot(path=str(shot))
            artifact(shot)
            assert_readable(results, scheme)

        # A banner: the page is sent to a Session that does not exist.
        page.evaluate("location.hash = '#/s/no-such-session'")
        expect(page.locator("[data-role=banner]")).to_contain_text("no-such-session")
        # The empty transcript's notice is drawn after the banner, not with it.
        expect(page.locator("[data-role=notice]")).to_be_visible()
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            results = measure(page, BANNER)
            report[scheme] += results
            assert_readable(results, scheme)

        # The toggle overrides the system and its pick survives a reload.
        page.emulate_media(color_scheme="light")
        toggle = page.locator("[data-role=theme-toggle]")
        expect(toggle).to_have_attribute("aria-pressed", "false")
        toggle.click()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        expect(toggle).to_have_attribute("aria-pressed", "true")
        assert effective_theme(page) == "dark"
        page.reload()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        assert effective_theme(page) == "dark"
        assert page.evaluate("localStorage.getItem('dsh.theme')") == "dark"
        page.locator("[data-role=theme-toggle]").click()
        expect(page.locator("html")).not_to_have_attribute("data-theme", "dark")
        assert effective_theme(page) == "light"
        assert page.evaluate("localStorage.getItem('dsh.theme')") is None

        figures = tmp_path / "contrast.json"
        figures.write_text(json.dumps(report, indent=2), encoding="utf-8")
        artifact(figures)
        # Only the two failures provoked above were logged.
        assert watch.page_errors == [] and watch.dialogs == []
        unexpected = [
            text
            for text in watch.console_errors
            if "no-such-session" not in text and "422 (Unprocessable Entity)" not in text
        ]
        assert unexpected == []
