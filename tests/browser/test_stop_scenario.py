"""Stop, in Debian's Chromium against a real `dsh web` whose model is slow: while the turn
runs the page shows the assistant typing (and what it streamed so far) and a Stop button;
Stop asks `POST /api/sessions/{id}/cancel`.

The cancel route is the server half of issue 17. Until a host has it, the page must say
plainly that this host cannot stop a turn (and the turn then ends by itself); with it, the
turn ends `cancelled` and the typing indicator and Stop go away. The test checks whichever
the host under test answers, so it holds before and after the route lands.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.webhost import WebHost

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send, slow_model

pytestmark = pytest.mark.browser


def test_stop_cancels_a_running_turn_or_says_plainly_that_the_host_cannot(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    with slow_model() as model:
        env = {"DSH_MODEL_BASE_URL": model.base_url, "DSH_MODEL": "slow", "DSH_API_KEY": ""}
        with WebHost.start(tmp_path / "data", model="openai", extra_env=env) as web:
            session_id = new_session(page, web)
            stop = page.locator("[data-role=stop]")
            typing = page.locator("[data-role=typing]")
            expect(stop).to_be_hidden()
            send(page, "think slowly")
            expect(typing).to_contain_text(model.first, timeout=WAIT_MS)
            expect(stop).to_be_visible()
            assert model.requests == 1

            with page.expect_response(f"**/api/sessions/{session_id}/cancel") as answer:
                stop.click()
            status = answer.value.status
            turn_end = page.locator('[data-event-type="turn/end"]')
            if status == 200:
                assert answer.value.json() == {"cancelled": True}
                expect(turn_end).to_contain_text("cancelled", timeout=WAIT_MS)
                expect(typing).to_have_count(0)
                expect(stop).to_be_hidden()
                assert model.disconnected.wait(10), "the model's stream was closed"
                problems = watch.problems
            else:
                assert status in (404, 405), status
                banner = page.locator("[data-role=banner]")
                expect(banner).to_contain_text("cannot stop a running turn yet")
                expect(banner).to_contain_text(str(status))
                expect(stop).to_be_enabled()
                model.finish()
                expect(page.locator('[data-event-type="message/assistant"]')).to_contain_text(
                    model.first + model.rest, timeout=WAIT_MS
                )
                expect(typing).to_have_count(0)
                expect(stop).to_be_hidden()
                assert turn_end.count() == 0, "the turn ended well: nothing to show"
                problems = [
                    p for p in watch.problems if "/cancel" not in p and str(status) not in p
                ]
            assert problems == []
