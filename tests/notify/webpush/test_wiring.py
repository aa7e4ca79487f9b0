"""`WebPush` in a real Host: the token guards `/api/push`, not the worker or its buttons."""

from __future__ import annotations

import time

from dsh_notify.webpush.capability import mint

from dsh.testing import plugin_host
from tests.support.deadlines import until

from .pushservice import Browser
from .wiring import PushOnlyPlugin


async def test_the_routes_sit_behind_the_hosts_guard_as_the_design_says() -> None:
    async with plugin_host(PushOnlyPlugin, config={"web_push": True}) as test:
        push = test.plugin.push
        await until(lambda: push._opened is not None, "WebPush.open()")
        async with test.client() as client:
            key = await client.get("/api/push/key")
            anonymous = await client.get("/api/push/key", headers={"Authorization": ""})
            made = await client.post(
                "/api/push/subscriptions",
                json=Browser().subscription("https://push.example.net/1"),
            )
            worker = await client.get("/sw.js", headers={"Authorization": ""})
            token = mint(
                push._opened.keys.secret, session_id="nope", seq=1, snooze=None, now=time.time()
            )
            done = await client.post(
                "/push/act",
                json={"capability": token, "action": "done"},
                headers={"Authorization": ""},
            )
            modules = (await client.get("/api/client-modules")).json()["modules"]
    assert key.status_code == 200 and "publicKey" in key.json()
    assert anonymous.status_code == 401
    assert made.status_code == 201
    assert made.headers["cache-control"] == "no-store"
    assert worker.status_code == 200
    assert worker.headers["service-worker-allowed"] == "/"
    # The host's policy lets a same-origin worker run (worker-src falls back to default-src 'self').
    policy = worker.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "worker-src" not in policy
    assert done.status_code == 200, done.text
    assert done.headers["cache-control"] == "no-store"
    assert [it["url"] for it in modules] == ["/plugins/PushOnlyPlugin/notify-push.js"]
