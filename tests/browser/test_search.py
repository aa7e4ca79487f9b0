"""Search what was said: Chinese words found in a later message, with the snippet shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import new_session, only_network_complaints, send

pytestmark = pytest.mark.browser

WAIT_MS = 20_000


def test_search_finds_chinese_words_in_any_message_and_shows_where(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    with WebHost.start(tmp_path / "data") as web:
        first = new_session(page, web)
        send(page, "hello there")
        send(page, "别忘了明天下午三点在会议室开会，带上电脑")
        other = new_session(page, web)
        send(page, "nothing to see here")
        # The demo answers it with its help, which names other Chinese words
        # (开会 among them): search for one it never says, once that answer is in.
        answers = page.locator('[data-event-type="message/assistant"]')
        expect(answers).to_have_count(1, timeout=WAIT_MS)
        wait_for(
            lambda: len(web.get("/api/sessions", params={"q": "会议室"}).json()["sessions"]) == 1,
            what="the message to be indexed",
        )
        box = page.locator("[data-role=session-search]")
        box.fill("会议室")
        entries = page.locator("[data-role=session-list] [data-session-id]")
        expect(entries).to_have_count(1, timeout=WAIT_MS)
        expect(entries.first).to_have_attribute("data-session-id", first)
        match = entries.first.locator("[data-role=session-match]")
        expect(match).to_contain_text("明天下午三点在会议室开会")
        expect(match.locator("mark")).to_have_text("会议室")
        box.fill("")
        expect(page.locator(f'[data-session-id="{other}"]')).to_have_count(1, timeout=WAIT_MS)
    assert only_network_complaints(watch) == []
