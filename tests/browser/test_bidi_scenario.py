"""Right-to-left overrides in Debian's Chromium (issue 35): a U+202E in a title or in a
link the model wrote reversed what the page showed after it. Titles lose their bidi
controls on the host; the page isolates the person's and the model's text, and a bare
URL's label shows its control the way its href carries it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send

pytestmark = pytest.mark.browser

RLO = "\u202e"
ANSWER = f"See https://evil.example/{RLO}fdp.exe and [{RLO}odd](https://ok.example/) after."

# Where each character of an element's text is drawn: (character, left edge, top edge,
# whether it is inside an element matching `inside`), in the text's logical order.
_GLYPHS = """(element, inside) => {
  const glyphs = [];
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const within = inside !== "" && node.parentElement.closest(inside) !== null;
    for (let i = 0; i < node.data.length; i += 1) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getBoundingClientRect();
      if (box.width > 0) glyphs.push([node.data[i], box.left, Math.round(box.top), within]);
    }
  }
  return glyphs;
}"""


def glyphs(locator: Locator, inside: str = "") -> list[tuple[str, float, int, bool]]:
    """The glyphs of the element `locator` finds, once it is drawn.

    Found again on each try: the session list may redraw its rows (a new count, a
    title) between an assertion and this, and a replaced row's old element is drawn
    nowhere (it would read as no glyphs at all)."""

    def drawn() -> list[Any] | None:
        found: list[Any] = locator.evaluate(_GLYPHS, inside)
        return found or None

    found = wait_for(drawn, timeout=WAIT_MS / 1000, what=f"{locator} to be drawn")
    return [(str(c), float(x), int(y), bool(w)) for c, x, y, w in found]


def in_reading_order(drawn: list[tuple[str, float, int, bool]]) -> bool:
    """True if each glyph is drawn right of the one before it, on one line."""
    lefts = [x for _, x, _, _ in drawn]
    return len({y for _, _, y, _ in drawn}) == 1 and lefts == sorted(lefts) and len(drawn) > 1


def test_a_u202e_title_and_link_render_in_order(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": ANSWER}]), encoding="utf-8")
    with WebHost.start(tmp_path / "data", overlay=None, model=f"scripted:{script}") as web:
        session_id = new_session(page, web)
        send(page, f"{RLO}evil title")

        # The title derived from the first message has no control; the message keeps it.
        title = page.locator(
            f"[data-role=session-list] [data-session-id='{session_id}'] [data-role=session-title]"
        )
        expect(title).to_have_text("evil title", timeout=WAIT_MS)
        assert in_reading_order(glyphs(title))
        bubble = page.locator('[data-event-type="message/user"] .bubble')
        expect(bubble).to_have_text(f"{RLO}evil title")
        assert bubble.get_attribute("dir") == "auto"

        # A title set with U+202E in it is stored and shown without it, in order.
        page.locator(f"[data-session-id='{session_id}'] [data-action=rename]").click()
        field = page.locator("[data-role=rename-input]")
        field.fill(f"report{RLO}exe.pdf")
        field.press("Enter")
        expect(title).to_have_text("reportexe.pdf", timeout=WAIT_MS)
        assert in_reading_order(glyphs(title))
        header = page.locator("[data-role=title]")
        expect(header).to_have_text("reportexe.pdf")
        assert in_reading_order(glyphs(header))
        stored = wait_for(
            lambda: [
                e for e in web.all_events(session_id)["events"] if e["type"] == "session/title"
            ],
            what="the stored title",
        )
        assert stored[0]["data"] == {"title": "reportexe.pdf"}

        # The model's links: the bare URL reads as the URL it opens; the override inside
        # the other link's text stays inside that link, and "after." reads in order.
        answer = page.locator("[data-role=answer] p")
        expect(answer).to_contain_text("after.", timeout=WAIT_MS)
        bare = answer.locator('a[href^="https://evil.example/"]')
        expect(bare).to_have_text("https://evil.example/%E2%80%AEfdp.exe")
        assert bare.get_attribute("href") == "https://evil.example/%E2%80%AEfdp.exe"
        drawn = glyphs(answer, inside='a[href="https://ok.example/"]')
        outside = [glyph for glyph in drawn if not glyph[3]]
        assert "".join(c for c, *_ in outside) == (
            "See https://evil.example/%E2%80%AEfdp.exe and  after."
        )
        assert in_reading_order(outside)
        odd = [x for c, x, _, within in drawn if within]
        assert odd == sorted(odd, reverse=True), "the link's own text keeps its override"
        assert watch.problems == []
