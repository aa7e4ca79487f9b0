"""A model that cannot be reached, in Debian's Chromium against a real `dsh web`.

The host's model is `openai` pointed at a port where nothing listens (no retries,
so the turn fails at once): the page shows a plain sentence, not the adapter's
`ConnectError`, with the code in a closed "Details for developers" disclosure,
and a Retry button. The model cannot be re-pointed while the host runs, so Retry
is shown to send the person's message again (one more POST of the same text) and
to fail the same way: two failed turns, and only the latest still offers Retry.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.webhost import WebHost, wait_for

from .chromium import PageWatch
from .scenario import WAIT_MS, free_port, new_session, only_network_complaints, send

pytestmark = pytest.mark.browser

UNREACHABLE = "The model could not be reached. Check your connection or the model settings."


def test_an_unreachable_model_is_a_sentence_with_retry_that_sends_the_message_again(
    page: Page, watch: PageWatch, tmp_path: Path
) -> None:
    overlay = tmp_path / "overlay.toml"
    overlay.write_text("[host.openai]\nmax_retries = 0\nconnect_timeout = 2.0\n", encoding="utf-8")
    env = {
        "DSH_MODEL_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",  # nothing listens there
        "DSH_MODEL": "absent",
        "DSH_API_KEY": "",
    }
    with WebHost.start(tmp_path / "data", overlay=overlay, model="openai", extra_env=env) as web:
        session_id = new_session(page, web)
        posts: list[str] = []
        page.on(
            "request",
            lambda request: (
                posts.append(request.post_data or "")
                if request.method == "POST" and request.url.endswith("/messages")
                else None
            ),
        )
        send(page, "what is on today?")

        failures = page.locator('[data-event-type="turn/end"]')
        expect(failures).to_have_count(1, timeout=WAIT_MS)
        expect(failures.first.locator(".error-text")).to_have_text(UNREACHABLE)
        details = failures.first.locator("[data-role=error-details]")
        expect(details).not_to_have_attribute("open", "")
        expect(details.locator("[data-role=error-code]")).to_be_hidden()
        expect(details.locator("[data-role=error-code]")).to_contain_text("model_unavailable")
        assert "ConnectError" not in failures.first.locator(".error-text").inner_text()

        failures.first.locator("[data-action=retry]").click()

        expect(failures).to_have_count(2, timeout=WAIT_MS)
        expect(failures.nth(1).locator(".error-text")).to_have_text(UNREACHABLE)
        expect(failures.first.locator("[data-action=retry]")).to_have_count(0)
        expect(failures.nth(1).locator("[data-action=retry]")).to_have_count(1)
        assert len(posts) == 2 and all("what is on today?" in body for body in posts)
        wait_for(
            lambda: (
                [
                    event["data"]["error"]["code"]
                    for event in web.all_events(session_id)["events"]
                    if event["type"] == "turn/end"
                ]
                == ["model_unavailable", "model_unavailable"]
            ),
            what="two failed turns to be stored",
        )
        texts = [
            event["data"]["text"]
            for event in web.all_events(session_id)["events"]
            if event["type"] == "message/user"
        ]
        assert texts == ["what is on today?", "what is on today?"]
        assert only_network_complaints(watch) == []
