"""A model's reasoning in a real browser, against a real `dsh web` process.

The scripted model thinks before it answers (its reasoning carries an HTML
payload). The transcript shows the answer in its bubble and the reasoning
above it as a collapsed "Thought for about N s" block whose text appears only
when opened, as text, and never inside the answer; it is the same after a
reload (from the stored `reasoning`) and in Chinese.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch

pytestmark = pytest.mark.browser

PAYLOAD = "<img src=x onerror=alert(1)>"
REASONING = f"The person said hello {PAYLOAD}; a short greeting fits."
ANSWER = "Hello! How can I help?"
ASSISTANT = '[data-event-type="message/assistant"]'
WAIT_MS = 20_000


def expect_collapsed_reasoning(page: Page, label: re.Pattern[str]) -> Locator:
    """The one assistant node: its answer in the bubble, its reasoning closed above it."""
    node = page.locator(ASSISTANT)
    expect(node).to_have_count(1, timeout=WAIT_MS)
    block = node.locator("[data-role=reasoning]")
    expect(block).to_have_count(1)
    expect(block).not_to_have_attribute("open", re.compile(".*"))
    expect(block.locator("summary")).to_have_text(label)
    expect(block.locator(".reasoning-text")).to_be_hidden()
    bubble = node.locator(".bubble")
    expect(bubble).to_have_text(ANSWER)
    assert "greeting" not in (bubble.text_content() or "")
    # The block sits above the answer.
    block_box, bubble_box = block.bounding_box(), bubble.bounding_box()
    assert block_box is not None and bubble_box is not None
    assert block_box["y"] < bubble_box["y"]
    return block


def test_reasoning_is_a_collapsed_block_above_the_answer_that_opens_as_text(
    page: Page, watch: PageWatch, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"reasoning": REASONING, "text": ANSWER}]), encoding="utf-8")
    with WebHost.start(tmp_path / "data", overlay=None, model=f"scripted:{script}") as web:
        page.goto(web.page_url)
        page.locator("[data-role=new-session]").click()
        expect(page.locator("[data-role=transcript]")).to_have_attribute("data-status", "live")
        session_id = page.locator("[data-role=session-list] [aria-current=true]").get_attribute(
            "data-session-id"
        )
        assert session_id
        composer = page.locator("[data-role=composer]")
        composer.fill("hello")
        composer.press("Enter")

        label = re.compile(r"^Thought for about \d+ s$")
        block = expect_collapsed_reasoning(page, label)
        stored = wait_for(
            lambda: [
                e for e in web.events(session_id)["events"] if e["type"] == "message/assistant"
            ],
            what="the stored answer",
        )
        assert stored[0]["data"] == {"text": ANSWER, "toolCalls": [], "reasoning": REASONING}

        block.locator("summary").click()
        expect(block).to_have_attribute("open", "")
        text = block.locator(".reasoning-text")
        expect(text).to_be_visible()
        assert text.text_content() == REASONING
        assert page.locator('img[src="x"]').count() == 0
        shot = tmp_path / "reasoning-open.png"
        page.locator(ASSISTANT).screenshot(path=str(shot))
        artifact(shot)

        page.reload()
        expect(page.locator("[data-role=transcript]")).to_have_attribute("data-status", "live")
        expect_collapsed_reasoning(page, label)

        page.locator('[data-role=lang] [data-lang="zh"]').click()
        expect_collapsed_reasoning(page, re.compile(r"^思考了约 \d+ 秒$"))
        assert page.locator('img[src="x"]').count() == 0
        assert watch.problems == []
