"""The page on a 375 px phone (touch, no hover), against a real `dsh web`: nothing is wider
than the screen, the closed drawer leaves no shadow band and no tab stops, and a message's
actions appear only for the message tapped, never on every block.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.webhost import WebHost

from .chromium import PageWatch
from .conftest import TIMEOUT_MS
from .scenario import WAIT_MS, send, write_script

pytestmark = pytest.mark.browser

WIDE = (
    "| " + " | ".join(f"column{n}" for n in range(8)) + " |\n"
    "|" + "---|" * 8 + "\n"
    "| " + " | ".join(f"unbreakablevalue{n}" for n in range(8)) + " |"
)
REPLY = f"""Here is a wide table:

{WIDE}

```
{"a_very_long_identifier_" * 12}
```

And https://example.org/{"long-path-segment/" * 8}
"""


def box_within(page: Page, selector: str) -> dict[str, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box


@pytest.fixture
def phone(browser: Browser) -> tuple[Page, PageWatch]:
    context = browser.new_context(
        viewport={"width": 375, "height": 812},
        locale="en-US",
        timezone_id="UTC",
        is_mobile=True,
        has_touch=True,
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    return page, PageWatch().attach(page)


def test_a_phone_gets_a_usable_page_without_overflow_shadow_bands_or_pills_on_every_block(
    phone: tuple[Page, PageWatch], tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    page, watch = phone
    replies = [
        {"text": "Checking.", "toolCalls": [{"name": "schedule_list", "arguments": {}}]},
        {"text": REPLY},
    ]
    script = write_script(tmp_path / "script.json", replies)
    try:
        with WebHost.start(tmp_path / "data", model=f"scripted:{script}") as web:
            page.goto(web.page_url)
            sidebar = page.locator("[data-role=sidebar]")
            closed = sidebar.evaluate(
                """(el) => ({visibility: getComputedStyle(el).visibility,
                            shadow: getComputedStyle(el).boxShadow,
                            right: el.getBoundingClientRect().right})"""
            )
            assert closed == {"visibility": "hidden", "shadow": "none", "right": 0}, closed

            page.locator("[data-role=menu]").tap()
            expect(sidebar).to_be_visible()
            page.wait_for_function(
                "() => document.querySelector('[data-role=sidebar]')"
                ".getBoundingClientRect().left === 0"
            )
            page.locator("[data-role=new-session]").tap()
            expect(page.locator("[data-role=transcript]")).to_have_attribute("data-status", "live")
            expect(page.locator("[data-role=scrim]")).to_be_hidden()
            send(page, "show me something wide")
            answer = page.locator('[data-event-type="message/assistant"] [data-role=answer]')
            expect(answer.locator("table")).to_have_count(1, timeout=WAIT_MS)

            widths = page.evaluate(
                """() => ({page: document.documentElement.scrollWidth,
                           body: document.body.scrollWidth,
                           table: [...document.querySelectorAll('.table-wrap')].map(
                               (el) => el.scrollWidth > el.clientWidth),
                           code: [...document.querySelectorAll('[data-role=code-block] pre')].map(
                               (el) => el.scrollWidth > el.clientWidth)})"""
            )
            assert widths["page"] <= 375 and widths["body"] <= 375, widths
            assert widths["table"] == [True] and widths["code"] == [True], widths

            for selector in ("[data-role=composer]", "[data-role=send]"):
                box = box_within(page, selector)
                assert box["x"] >= 0 and box["x"] + box["width"] <= 375, (selector, box)
                assert box["y"] + box["height"] <= 812, (selector, box)

            opacities = (
                "() => [...document.querySelectorAll('[data-role=message-actions]')]"
                ".map((el) => getComputedStyle(el).opacity)"
            )
            assert set(page.evaluate(opacities)) == {"0"}, "no actions on any block at rest"
            messages = page.locator("[data-role=transcript] [data-message]")
            count = messages.count()
            assert count >= 3
            messages.last.locator("[data-role=answer]").tap()
            page.wait_for_function(
                f"() => ({opacities})().filter((o) => o === '1').length === 1"
                f" && ({opacities})().at(-1) === '1'"
            )
            shot = tmp_path / "phone-tapped.png"
            page.screenshot(path=str(shot))
            artifact(shot)

            # The drawer opens over the page and closes from its scrim.
            page.locator("[data-role=menu]").tap()
            expect(page.locator("[data-role=scrim]")).to_be_visible()
            page.mouse.click(360, 400)
            expect(sidebar).to_be_hidden()
            assert watch.problems == []
    finally:
        page.context.close()
