"""Every tab works: a second tab and a bookmark need no pasted token; a page without one says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.webhost import WebHost

from .chromium import PageWatch
from .scenario import new_session, only_network_complaints

pytestmark = pytest.mark.browser

WAIT_MS = 20_000


def test_a_second_tab_and_a_bookmark_need_no_pasted_token(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    with WebHost.start(tmp_path / "data") as web:
        session_id = new_session(page, web)
        assert "token=" not in page.url  # taken out of the address bar
        second = page.context.new_page()
        second.goto(f"{web.base_url}/")
        listed = second.locator(f'[data-session-id="{session_id}"]')
        expect(listed).to_have_count(1, timeout=WAIT_MS)
        expect(second.locator("[data-role=token-prompt]")).to_be_hidden()
        bookmark = page.context.new_page()
        bookmark.goto(f"{web.base_url}/#/s/{session_id}")
        expect(bookmark.locator("[data-role=transcript]")).to_have_attribute(
            "data-status", "live", timeout=WAIT_MS
        )
        # While the host is down the header never says the conversation is open.
        web.terminate()
        expect(bookmark.locator("[data-role=status]")).to_have_attribute(
            "data-state", "reconnecting", timeout=WAIT_MS
        )
        expect(bookmark.locator("[data-role=session-badge]")).to_be_hidden()
        second.close()
        bookmark.close()
    assert only_network_complaints(watch) == []


def test_a_page_without_a_token_turns_off_what_needs_it_and_names_its_own_address(
    browser: Browser, tmp_path: Path
) -> None:
    with WebHost.start(tmp_path / "data") as web:
        context = browser.new_context(locale="en-US", timezone_id="UTC")
        try:
            page = context.new_page()
            page.goto(f"{web.base_url}/")
            expect(page.locator("[data-role=token-prompt]")).to_be_visible(timeout=WAIT_MS)
            expect(page.locator("[data-role=token-input]")).to_have_attribute(
                "placeholder", f"{web.base_url}/?token=…"
            )
            create = page.locator("[data-role=new-session]")
            expect(create).to_be_disabled()
            expect(page.locator("[data-role=no-sessions]")).to_contain_text("access token")
            page.locator("[data-role=token-input]").fill(web.page_url)
            page.locator("[data-action=use-token]").click()
            expect(page.locator("[data-role=token-prompt]")).to_be_hidden(timeout=WAIT_MS)
            expect(create).to_be_enabled()
            # Kept for the next tab of this browser.
            other = context.new_page()
            other.goto(f"{web.base_url}/")
            expect(other.locator("[data-role=new-session]")).to_be_enabled(timeout=WAIT_MS)
            expect(other.locator("[data-role=token-prompt]")).to_be_hidden()
        finally:
            context.close()


def test_a_conversation_this_host_does_not_have_ends_in_a_sentence_not_reconnecting(
    page: Page, tmp_path: Path
) -> None:
    with WebHost.start(tmp_path / "data") as web:
        page.goto(f"{web.page_url}#/s/0123456789abcdef")
        expect(page.locator("[data-role=banner]")).to_contain_text(
            "This host has no conversation 0123456789abcdef", timeout=WAIT_MS
        )
        expect(page.locator("[data-role=status]")).not_to_have_attribute(
            "data-state", "reconnecting"
        )
        expect(page.locator("[data-role=session-badge]")).to_be_hidden()
        expect(page.locator("[data-role=new-session]")).to_be_enabled()
