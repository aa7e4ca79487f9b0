"""Fixtures for the real-browser tests: a headless Debian Chromium per test, a watched page.

The synchronous Playwright API is used on purpose: the `dsh web` harness is
synchronous too, and these tests never run inside the anyio plugin's event
loop (Playwright's sync API refuses to start inside a running loop). Each test
gets its own Playwright instance, so none of its machinery outlives the test
and meets the async tests that run later in the same process.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from .chromium import ARTIFACTS, ChromiumMissing, PageWatch, chromium_path, launch, publish

_log = logging.getLogger(__name__)
_FAILED = pytest.StashKey[bool]()
_PUBLISHED = pytest.StashKey[list[Path]]()
TIMEOUT_MS = 20_000


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember a failed test body, so the `page` fixture can photograph the page."""
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_FAILED] = True
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """List the screenshots this run published, so a CI log points straight at them."""
    published = terminalreporter.config.stash.get(_PUBLISHED, [])
    if published:
        terminalreporter.section("browser artifacts")
        for path in published:
            terminalreporter.write_line(str(path))


def page_text(page: Page, limit: int = 4000) -> str:
    """The page's visible text and its transcript's status, cut at `limit` characters."""
    try:
        status = page.locator("[data-role=transcript]").first.get_attribute(
            "data-status", timeout=2000
        )
        text = page.locator("body").inner_text(timeout=2000)
    except Exception as problem:  # a hung or closed page still gets its screenshot
        return f"(the page could not be read: {problem})"
    return f"[transcript status: {status}]\n{text[:limit]}"


def _remember(config: pytest.Config, path: Path) -> Path:
    config.stash.setdefault(_PUBLISHED, []).append(path)
    return path


@pytest.fixture(autouse=True)
def _fresh_artifacts(request: pytest.FixtureRequest) -> None:
    """A test's `test-output/browser/<test>/` holds only what its latest run left."""
    shutil.rmtree(ARTIFACTS / request.node.name, ignore_errors=True)


@pytest.fixture
def browser() -> Iterator[Browser]:
    """A headless `/usr/bin/chromium`; fails (never skips) when it is not installed."""
    try:
        chromium_path()
        problem = ""
    except ChromiumMissing as missing:
        problem = str(missing)
    if problem:
        pytest.fail(problem, pytrace=False)
    with sync_playwright() as playwright:
        instance = launch(playwright)
        try:
            yield instance
        finally:
            instance.close()


@pytest.fixture
def watch() -> PageWatch:
    """The console errors, page errors and dialogs of the `page` fixture's page."""
    return PageWatch()


@pytest.fixture
def page(
    browser: Browser, watch: PageWatch, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Page]:
    """A 1280×800 English page in UTC, watched; a failing test leaves a screenshot behind."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, locale="en-US", timezone_id="UTC"
    )
    context.set_default_timeout(TIMEOUT_MS)
    opened = context.new_page()
    watch.attach(opened)
    try:
        yield opened
    finally:
        if request.node.stash.get(_FAILED, False) and not opened.is_closed():
            shot = tmp_path / "failure.png"
            opened.screenshot(path=str(shot), full_page=True)
            copy = _remember(request.config, publish(shot, request.node.name))
            _log.error("failure screenshot: %s", copy)
            # CI keeps only the log: say what the page showed in words too.
            _log.error("failure page text at %s:\n%s", opened.url, page_text(opened))
        context.close()


@pytest.fixture
def artifact(
    request: pytest.FixtureRequest, record_property: Callable[[str, object], None]
) -> Callable[[Path], Path]:
    """Publish a file from `tmp_path` to `test-output/browser/<test>/`, log and record where."""

    def keep(path: Path) -> Path:
        copy = _remember(request.config, publish(path, request.node.name))
        _log.info("browser artifact %s: %s (copy of %s)", path.stem, copy, path)
        record_property(f"artifact-{path.stem}", str(copy))
        return copy

    return keep
