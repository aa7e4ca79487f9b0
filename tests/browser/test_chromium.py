"""Debian's Chromium is there, and the page watch catches what the scenario says never happens."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .chromium import CHROMIUM, ChromiumMissing, PageWatch, chromium_path

pytestmark = pytest.mark.browser


def test_debian_chromium_is_installed_where_the_browser_tests_launch_it() -> None:
    try:
        found = chromium_path()
        problem = ""
    except ChromiumMissing as missing:
        found, problem = None, str(missing)
    if problem:
        pytest.fail(problem, pytrace=False)
    assert found == CHROMIUM


def test_page_watch_records_a_fired_payload_a_console_error_and_an_uncaught_exception(
    page: Page, watch: PageWatch
) -> None:
    page.set_content("<p>ready</p>")
    with page.expect_event("dialog"):
        page.evaluate(
            "document.body.insertAdjacentHTML('beforeend', '<img src=x onerror=alert(1)>')"
        )
    with page.expect_event("console"):
        page.evaluate("console.error('broken')")
    with page.expect_event("pageerror"):
        page.evaluate("setTimeout(() => { throw new Error('boom'); })")

    expect(page.locator('img[src="x"]')).to_have_count(1)
    assert watch.dialogs == ["alert: 1"]
    assert [text.split(" (")[0] for text in watch.console_errors] == ["broken"]
    assert watch.page_errors == ["Error: boom"]
    assert len(watch.problems) == 3
