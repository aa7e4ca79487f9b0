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
With the schedule plugin loaded, a real reminder fires; Snooze from its
notification stores the plugin's snooze of that dispatch, and Done reads the
alert on the host (its unread count drops to 0).

`WebPush` is served by a test-only plugin (`tests/notify/webpush/wiring.py`)
registered through a temporary entry point, as `dsh web` loads any plugin;
dsh-notify's own plugin class wires it the same way.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dsh_notify.webpush.capability import mint
from dsh_notify.webpush.keys import KEY_FILE, VapidKeys
from playwright.sync_api import Browser, BrowserContext, CDPSession, Page, Worker, expect

from dsh import SnoozeAction
from tests.notify.webpush.wiring import ENTRY_POINT
from tests.support.webhost import REPO, WebHost, wait_for

from .test_attention_tabs_scenario import (
    ask_for_reminder,
    host_unread,
    reminder_script,
    wait_host_unread,
)

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


@contextmanager
def push_host(
    tmp_path: Path, *, schedule: bool = False, model: str | None = None
) -> Iterator[WebHost]:
    """`dsh web` with the test plugin (and, if asked, the reminder plugins) on a fresh data dir."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    tables = "[plugins.tool-schedule]\n\n[plugins.client-ui-schedule]\n\n" if schedule else ""
    (overlay / "overlay.toml").write_text(
        f'[host]\nmodel = "demo"\n\n{tables}[plugins.{ENTRY_POINT}]\nweb_push = true\n'
    )
    path = os.pathsep.join(
        [str(plugin_path(tmp_path)), str(REPO), os.environ.get("PYTHONPATH", "")]
    )
    data = tmp_path / "data"
    data.mkdir()
    with WebHost.start(data, overlay=overlay, model=model, extra_env={"PYTHONPATH": path}) as host:
        yield host


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebHost]:
    with push_host(tmp_path) as host:
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
    self.pushes = 0;
    self.addEventListener("push", () => { self.pushes += 1; });
    self.closes = 0;
    self.addEventListener("notificationclose", () => { self.closes += 1; });
    self.shows = [];
    const show = self.registration.showNotification.bind(self.registration);
    self.registration.showNotification = (title, options) => show(title, options).then(
        () => { self.shows.push({ ok: true, title, body: options.body ?? "" }); },
        (e) => { self.shows.push({ ok: false, title, body: String(e) }); throw e; });
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


@dataclass
class Pushing:
    """A page of `web` whose service worker is up, and the way to push to it."""

    web: WebHost
    context: BrowserContext
    page: Page
    cdp: CDPSession
    worker: Worker
    registration: str

    @classmethod
    @contextmanager
    def open(cls, browser: Browser, web: WebHost) -> Iterator[Pushing]:
        context = browser.new_context(locale="en-US", timezone_id="UTC")
        context.grant_permissions(["notifications"], origin=web.base_url)
        context.set_default_timeout(WAIT_MS)
        try:
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
            worker.evaluate(SPY)
            yield cls(web, context, page, cdp, worker, registration)
        finally:
            context.close()

    def push(self, alert: dict[str, Any]) -> None:
        """Deliver `alert` as a push message would (the vendor's service is out of reach)."""
        self.cdp.send(
            "ServiceWorker.deliverPushMessage",
            {
                "origin": self.web.base_url,
                "registrationId": self.registration,
                "data": json.dumps(alert),
            },
        )

    def press(self, action: str) -> None:
        """Press `action` ("" = the notification itself) on the notification shown."""
        self.worker.evaluate(CLICK, [action])

    def shows(self) -> list[dict[str, Any]]:
        """Each `showNotification` the worker made and how it ended: `{ok, title, body}`."""
        made: list[dict[str, Any]] = self.worker.evaluate("self.shows")
        return made

    def deliver(self, alert: dict[str, Any], what: str) -> list[dict[str, Any]]:
        """Push `alert`; the notifications the browser lists once the worker showed it.

        Headless Chromium now and then leaves a notification out of
        `getNotifications()` although `showNotification` resolved and no
        `notificationclose` came (seen about once in eight runs). The worker
        did its part — each attempt's `showNotification` is checked — so the
        push is delivered again, at most three times.
        """
        for _ in range(3):
            before = len(self.shows())
            self.push(alert)
            wait_for(lambda n=before: len(self.shows()) > n or None, what=f"{what} to be shown")
            assert self.shows()[-1] == {"ok": True, "title": alert["title"], "body": alert["body"]}
            try:
                notes: list[dict[str, Any]] = wait_for(
                    lambda: shown(self.worker) or None, timeout=5, what=what
                )
            except TimeoutError:
                continue
            return notes
        raise AssertionError(f"{what}: shown three times, never listed by the browser")

    def acted(self) -> list[int]:
        """The statuses /push/act answered the worker, in order."""
        statuses: list[int] = self.worker.evaluate("self.acted")
        return statuses


def capability(web: WebHost, session_id: str, seq: int, snooze: SnoozeAction | None) -> str:
    """What the sender puts in a payload, minted with the secret this host keeps."""
    keys = VapidKeys.from_record(json.loads((web.data_dir / KEY_FILE).read_text()))
    return mint(keys.secret, session_id=session_id, seq=seq, snooze=snooze, now=time.time())


def test_a_push_shows_its_notification_and_its_buttons_and_click_act_on_this_host(
    browser: Browser, web: WebHost
) -> None:
    session_id = web.create_session()
    with Pushing.open(browser, web) as it:
        _shows_and_acts(it, session_id)


def _shows_and_acts(it: Pushing, session_id: str) -> None:
    web, page, worker = it.web, it.page, it.worker
    act = capability(web, session_id, 1, None)
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
    notes = it.deliver(alert, "the notification")
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
    it.press("done")
    wait_for(lambda: it.acted() or None, what="/push/act to answer")
    assert it.acted() == [200]
    assert shown(worker) == []

    # A forged capability is refused there: the notification comes back saying why.
    forged = {**alert, "act": act[:-4] + "AAAA"}
    it.deliver(forged, "the second notification")
    before = len(it.shows())
    it.press("done")
    wait_for(lambda: len(it.acted()) == 2 or None, what="the forged Done to be answered")
    assert it.acted() == [200, 403]
    wait_for(lambda: len(it.shows()) > before or None, what="the notification to come back")
    assert it.shows()[-1] == {
        "ok": True,
        "title": "Call mum",
        "body": "This notification has expired: open the conversation instead.",
    }

    # A click on the notification itself: the open tab shows that conversation.
    worker.evaluate(
        "self.registration.getNotifications().then((ns) => ns.forEach((n) => n.close()))"
    )
    it.deliver(alert, "the third notification")
    it.press("")
    expect(page).to_have_url(f"{web.base_url}/#/s/{session_id}")


def test_the_address_a_notification_opens_shows_that_conversation(
    browser: Browser, web: WebHost
) -> None:
    session_id = web.create_session()
    context = browser.new_context(locale="en-US", timezone_id="UTC")
    page = context.new_page()
    page.goto(f"{web.page_url}&session={session_id}")
    expect(page).to_have_url(f"{web.base_url}/#/s/{session_id}", timeout=WAIT_MS)
    context.close()


def test_snooze_and_done_from_the_notification_act_on_a_real_reminder(
    browser: Browser, tmp_path: Path
) -> None:
    script = reminder_script(tmp_path / "script.json", "stretch")
    with push_host(tmp_path, schedule=True, model=f"scripted:{script}") as web:
        session_id = web.create_session()
        ask_for_reminder(web, session_id, "stretch")
        wait_host_unread(web, session_id, 1)
        (dispatch,) = [
            line
            for line in web.stored_log(session_id)
            if line.get("type") == "schedule/change" and line["data"].get("change") == "dispatch"
        ]
        # The snooze the schedule plugin names for its alerts (DESIGN §14.1).
        snooze = SnoozeAction(
            plugin="tool-schedule", action="snooze", args={"dispatchSeq": dispatch["seq"]}
        )
        alert = {
            "title": "stretch",
            "body": "Due now",
            "sessionId": session_id,
            "tag": f"{session_id}/stretch",
            "url": f"/?session={session_id}",
            "seq": dispatch["seq"],
            "act": capability(web, session_id, dispatch["seq"], snooze),
            "snooze": True,
        }
        with Pushing.open(browser, web) as it:
            it.deliver(alert, "the notification")
            it.press("snooze")
            wait_for(lambda: it.acted() or None, what="the snooze to be answered")
            assert it.acted() == [200]
            (snoozed,) = wait_for(
                lambda: (
                    [
                        line
                        for line in web.stored_log(session_id)
                        if line.get("type") == "schedule/snooze"
                    ]
                    or None
                ),
                what="the stored snooze",
            )
            assert snoozed["data"]["dispatchSeq"] == dispatch["seq"]
            assert host_unread(web, session_id) == 1  # a snooze is not a read

            it.deliver(alert, "the notification again")
            it.press("done")
            wait_for(lambda: len(it.acted()) == 2 or None, what="Done to be answered")
            assert it.acted() == [200, 200]
            wait_host_unread(web, session_id, 0)
            assert shown(it.worker) == []
