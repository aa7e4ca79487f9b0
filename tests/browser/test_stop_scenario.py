"""Stop, in Debian's Chromium against a real `dsh web` whose model is slow: while the turn
runs the page shows the assistant typing (and what it streamed so far) and a Stop button;
Stop asks `POST /api/sessions/{id}/cancel`, the turn ends `cancelled` (stored as its
`turn/end`), the model's stream is closed, and the typing indicator and Stop go away.
A message queued behind the stopped turn still runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import WAIT_MS, new_session, send, slow_model

pytestmark = pytest.mark.browser


def test_stop_cancels_the_running_turn_and_the_host_stores_it_as_cancelled(
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

            assert answer.value.status == 200
            assert answer.value.json() == {"cancelled": True}
            turn_end = page.locator('[data-event-type="turn/end"]')
            expect(turn_end).to_contain_text("cancelled", timeout=WAIT_MS)
            expect(typing).to_have_count(0)
            expect(stop).to_be_hidden()
            assert model.disconnected.wait(10), "the model's stream was closed"
            ends = [
                event["data"]
                for event in web.all_events(session_id)["events"]
                if event["type"] == "turn/end"
            ]
            assert [end["error"]["code"] for end in ends] == ["cancelled"]
            assert page.locator('[data-event-type="message/assistant"]').count() == 0

            # The next message is a new turn: the host was not left busy.
            model.finish()
            send(page, "and now?")
            expect(page.locator('[data-event-type="message/assistant"]')).to_contain_text(
                model.first + model.rest, timeout=WAIT_MS
            )
            wait_for(
                lambda: (
                    [
                        event["data"]["status"]
                        for event in web.all_events(session_id)["events"]
                        if event["type"] == "turn/end"
                    ]
                    == ["error", "ok"]
                ),
                what="the second turn to end well",
            )
            assert watch.problems == []
