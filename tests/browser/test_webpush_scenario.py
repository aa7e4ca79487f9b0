"""Web Push's service worker in Debian's Chromium, against a real `dsh web` with `WebPush` loaded.

The page registers `/sw.js` on load. A push is delivered to the worker
through the DevTools protocol (`ServiceWorker.deliverPushMessage`: the
browser vendor's push service, which a real subscription needs, cannot be
reached from these machines), and the notification the worker shows is read
back with `registration.getNotifications()`: title, body, tag and the two
buttons. CDP cannot press a system notification's buttons, so the test
dispatches the `notificationclick` the browser would, inside the worker:
Done with the alert's capability reaches `/push/act` (the notification stays
closed), a forged one is refused there (it comes back saying so), and a
click on the notification itself makes the open tab show that conversation.
`/?session=<id>` — what the worker opens when no tab is — opens it too.

`WebPush` is served by a test-only plugin (`tests/notify/webpush/wiring.py`)
registered through a temporary entry point, as `dsh web` loads any plugin;
dsh-notify's own plugin class wires it the same way.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dsh_notify.webpush.capability import mint
from dsh_notify.webpush.keys import KEY_FILE, VapidKeys
from playwright.sync_api import Browser, BrowserContext, Worker, expect

from tests.notify.webpush.wiring import ENTRY_POINT
from tests.support.webhost import REPO, WebHost, wait_for

pytestmark = pytest.mark.browser

WAIT_MS = 20_000


def plugin_path(tmp_path: Path) -> Path:
    """A folder whose `*.dist-info` declares the test plugin's entry point."""
    folder = tmp_path / "site"
    info = folder / "dsh_webpush_test-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dsh-webpush-test\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        f"[dsh.plugins]\n{ENTRY_POINT} = tests.notify.webpush.wiring:PushOnlyPlugin\n"
    )
    return folder


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebHost]:
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "overlay.toml").write_text(
        f'[host]\nmodel = "demo"\n\n[plugins.{ENTRY_POINT}]\nweb_push = true\n'
    )
    path = os.pathsep.join(
        [str(plugin_path(tmp_path)), str(REPO), os.environ.get("PYTHONPATH", "")]
    )
    data = tmp_path / "data"
    data.mkdir()
    with WebHost.start(data, overlay=overlay, extra_env={"PYTHONPATH": path}) as host:
        yield host


def service_worker(context: BrowserContext) -> Worker:
    if context.service_workers:
        return context.service_workers[0]
    return context.wait_for_event("serviceworker", timeout=WAIT_MS)


NOTIFICATIONS = """async () => (await self.registration.getNotifications()).map((n) => ({
    title: n.title, body: n.body, tag: n.tag, data: n.data,
    actions: n.actions.map((a) => [a.action, a.title]),
}))"""

# Record what /push/act answers the worker (its `fetch` is looked up when called).
SPY = """() => {
    const real = self.fetch.bind(self);
    self.acted = [];
    self.fetch = async (...args) => {
        const response = await real(...args);
        self.acted.push(response.status);
        return response;
    };
}"""

CLICK = """async ([action]) => {
    const [note] = await self.registration.getNotifications();
    // What the browser dispatches when the person presses a button (or the notification).
    const event = new NotificationEvent("notificationclick", { notification: note, action });
    try { self.dispatchEvent(event); } catch {}
    return true;
}"""


def shown(worker: Worker) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = worker.evaluate(NOTIFICATIONS)
    return notes


def test_a_push_shows_its_notification_and_its_buttons_and_click_act_on_this_host(
    browser: Browser, web: WebHost
) -> None:
    session_id = web.create_session()
    context = browser.new_context(locale="en-US", timezone_id="UTC")
    context.grant_permissions(["notifications"], origin=web.base_url)
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    registrations: list[dict[str, Any]] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: registrations.extend(event["registrations"]),
    )
    cdp.send("ServiceWorker.enable")
    page.goto(web.page_url)
    scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == web.base_url + "/"
    worker = service_worker(context)
    registration = wait_for(
        lambda: next(
            (
                it["registrationId"]
                for it in registrations
                if it["scopeURL"] == scope and not it["isDeleted"]
            ),
            None,
        ),
        what="the worker's registration id",
    )

    keys = VapidKeys.from_record(json.loads((web.data_dir / KEY_FILE).read_text()))
    act = mint(keys.secret, session_id=session_id, seq=1, snooze=None, now=time.time())
    alert = {
        "title": "Call mum",
        "body": "Due 14:00, on time",
        "sessionId": session_id,
        "tag": f"{session_id}/r1@1",
        "url": f"/?session={session_id}",
        "seq": 1,
        "act": act,
        "snooze": True,
    }
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": web.base_url, "registrationId": registration, "data": json.dumps(alert)},
    )
    notes = wait_for(lambda: shown(worker) or None, what="the notification")
    assert [(n["title"], n["body"], n["tag"], n["actions"]) for n in notes] == [
        (
            "Call mum",
            "Due 14:00, on time",
            alert["tag"],
            [["snooze", "Snooze 10 min"], ["done", "Done"]],
        )
    ]
    assert notes[0]["data"] == alert

    # Done with the alert's own capability: accepted at /push/act (no token), so nothing comes back.
    worker.evaluate(SPY)
    worker.evaluate(CLICK, ["done"])
    wait_for(lambda: worker.evaluate("self.acted").count(200) or None, what="/push/act to answer")
    assert worker.evaluate("self.acted") == [200]
    assert shown(worker) == []

    # A forged capability is refused there: the notification comes back saying why.
    forged = {**alert, "act": act[:-4] + "AAAA"}
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": web.base_url, "registrationId": registration, "data": json.dumps(forged)},
    )
    wait_for(lambda: shown(worker) or None, what="the second notification")
    worker.evaluate(CLICK, ["done"])
    back = wait_for(
        lambda: [n for n in shown(worker) if "expired" in n["body"]] or None,
        what="the refused notification to come back",
    )
    assert back[0]["body"] == "This notification has expired: open the conversation instead."
    assert worker.evaluate("self.acted") == [200, 403]

    # A click on the notification itself: the open tab shows that conversation.
    worker.evaluate(CLICK, [""])
    expect(page).to_have_url(f"{web.base_url}/#/s/{session_id}")
    context.close()


def test_the_address_a_notification_opens_shows_that_conversation(
    browser: Browser, web: WebHost
) -> None:
    session_id = web.create_session()
    context = browser.new_context(locale="en-US", timezone_id="UTC")
    page = context.new_page()
    page.goto(f"{web.page_url}&session={session_id}")
    expect(page).to_have_url(f"{web.base_url}/#/s/{session_id}", timeout=WAIT_MS)
    context.close()
