"""Regenerate the README's screenshots from a real `dsh web` and Debian's Chromium.

    .venv/bin/python -m tests.browser.make_screenshot            # writes docs/
    .venv/bin/python -m tests.browser.make_screenshot --out DIR

It boots `dsh web --overlay overlays/web-schedule --model demo` on a temporary
data directory and holds two short conversations with the offline demo model:
a Chinese one on a 375 px phone (UI in 中文) and an English one on a 1280×800
desktop. Each first asks for a reminder ten minutes out (it stays in the
reminders panel, counting down), then for one two seconds out; the pictures are
taken once that reminder's card is in and the model's answer to it is
finished: `screenshot-mobile.png` and `screenshot.png`. A page that logged an error,
raised, or opened a dialog is not photographed: the script fails instead.

`tests/browser/test_make_screenshot.py` runs it on every test run (into a
temporary folder), so the pictures can always be regenerated.
"""

from __future__ import annotations

import argparse
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from tests.support.webhost import REPO, WebHost

from .chromium import PageWatch, launch

__all__ = ["DESKTOP", "MOBILE", "Shot", "main", "make_screenshots"]

_log = logging.getLogger("make_screenshot")
WAIT_MS = 30_000
CARD = '[data-event-type="schedule/change"][data-view]'


@dataclass(frozen=True)
class Shot:
    """One picture: where it goes, the viewport, the UI language and what is said."""

    name: str
    width: int
    height: int
    locale: str
    later: str
    message: str
    mobile: bool = False
    zone: str = "UTC"


DESKTOP = Shot(
    "screenshot.png",
    1280,
    800,
    "en-US",
    "remind me in 10 minutes to drink water",
    "remind me in 2 seconds to stretch",
    zone="Europe/Berlin",
)
MOBILE = Shot(
    "screenshot-mobile.png",
    375,
    812,
    "zh-CN",
    "10分钟后提醒我伸展一下",
    "2秒后提醒我喝水",
    mobile=True,
    zone="Asia/Shanghai",
)


def make_screenshots(browser: Browser, web: WebHost, out_dir: Path) -> list[Path]:
    """Hold both conversations on `web` and save the pictures in `out_dir`; returns their paths.

    Raises `RuntimeError` when a page reported a console error, an uncaught
    exception or a dialog, and Playwright's `AssertionError` when the
    conversation did not reach the reminder's answer in time.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    # The phone's Session first, so the desktop's sidebar lists both.
    started = [_start(browser, web, shot) for shot in (MOBILE, DESKTOP)]
    paths: list[Path] = []
    for shot, context, page, watch in started:
        try:
            _finish(page)
            if watch.problems:
                raise RuntimeError(f"{shot.name}: the page reported problems: {watch.problems}")
            path = out_dir / shot.name
            page.screenshot(path=str(path))
            paths.append(path)
        finally:
            context.close()
    return paths


def _start(
    browser: Browser, web: WebHost, shot: Shot
) -> tuple[Shot, BrowserContext, Page, PageWatch]:
    context = browser.new_context(
        viewport={"width": shot.width, "height": shot.height},
        locale=shot.locale,
        timezone_id=shot.zone,
        is_mobile=shot.mobile,
        has_touch=shot.mobile,
    )
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    watch = PageWatch().attach(page)
    page.goto(web.page_url)
    if shot.mobile:
        page.locator("[data-role=menu]").click()
    page.locator("[data-role=new-session]").click()
    expect(page.locator("[data-role=transcript]")).to_have_attribute("data-status", "live")
    composer = page.locator("[data-role=composer]")
    composer.fill(shot.later)
    composer.press("Enter")
    expect(page.locator("[data-role=reminders] [data-reminder-id]")).to_have_count(
        1, timeout=WAIT_MS
    )
    expect(page.locator("[data-role=typing]")).to_have_count(0, timeout=WAIT_MS)
    composer.fill(shot.message)
    composer.press("Enter")
    return shot, context, page, watch


def _finish(page: Page) -> None:
    """Wait for the card and the finished answer to it, then leave the page at rest."""
    card = page.locator(CARD)
    expect(card).to_have_count(1, timeout=WAIT_MS)
    card_seq = int(card.get_attribute("data-seq") or 0)
    page.wait_for_function(
        """(seq) => [...document.querySelectorAll('[data-event-type="message/assistant"]')]
            .some((node) => Number(node.dataset.seq) > seq)""",
        arg=card_seq,
        timeout=WAIT_MS,
    )
    expect(page.locator("[data-role=typing]")).to_have_count(0, timeout=WAIT_MS)
    expect(page.locator("[data-role=pending]")).to_have_count(0, timeout=WAIT_MS)
    # The ten-minute reminder is still ahead, counting down in the panel.
    expect(page.locator("[data-role=reminders] [data-reminder-id]")).to_have_count(
        1, timeout=WAIT_MS
    )
    # No focus ring, no hover-only controls: the picture shows the page at rest.
    page.locator("[data-role=composer]").blur()
    page.mouse.move(0, 0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs", help="folder for the PNGs")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    with (
        tempfile.TemporaryDirectory(prefix="dsh-screenshot-") as data,
        WebHost.start(Path(data), model="demo") as web,
        sync_playwright() as playwright,
    ):
        browser = launch(playwright)
        try:
            for path in make_screenshots(browser, web, args.out):
                _log.info("wrote %s", path)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
