"""`POST /push/act` (the notification's buttons) and `GET /sw.js`."""

from __future__ import annotations

import time

from dsh_notify.webpush.capability import mint
from dsh_notify.webpush.routes import SNOOZE_SECONDS, SW_PATH

from dsh import ActionError, SessionNotFound, SnoozeAction, StorageError

from .conftest import Harness, Recorder, context, harness

SNOOZE = SnoozeAction(plugin="tool-schedule", action="snooze", args={"dispatchSeq": 3})


def capability(test: Harness, *, seq: int = 3, snooze: SnoozeAction | None = SNOOZE) -> str:
    secret = test.push._opened.keys.secret  # type: ignore[union-attr]
    return mint(secret, session_id="s-1", seq=seq, snooze=snooze, now=time.time())


async def test_done_reads_exactly_the_alert_the_capability_names() -> None:
    async with harness() as test:
        response = await test.client.post(
            "/push/act", json={"capability": capability(test, seq=9), "action": "done"}
        )
    assert response.status_code == 200
    assert response.json() == {"done": True, "unread": 0}
    assert response.headers["cache-control"] == "no-store"
    assert test.recorder.reads == [("s-1", 9)]
    assert test.recorder.runs == []


async def test_snooze_runs_the_alerts_own_snooze_for_ten_minutes() -> None:
    async with harness() as test:
        response = await test.client.post(
            "/push/act", json={"capability": capability(test), "action": "snooze"}
        )
    assert response.status_code == 200
    assert response.json() == {"snoozed": {"snooze": {"id": "r2"}}}
    assert test.recorder.runs == [
        ("s-1", "tool-schedule", "snooze", {"dispatchSeq": 3, "seconds": SNOOZE_SECONDS})
    ]
    assert SNOOZE_SECONDS == 600


async def test_an_alert_without_a_snooze_cannot_be_snoozed() -> None:
    async with harness() as test:
        response = await test.client.post(
            "/push/act", json={"capability": capability(test, snooze=None), "action": "snooze"}
        )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "no_snooze"
    assert test.recorder.runs == []


async def test_a_forged_capability_or_a_bad_body_acts_on_nothing() -> None:
    async with harness() as test:
        token = capability(test)
        forged = await test.client.post(
            "/push/act", json={"capability": token[:-3] + "AAA", "action": "done"}
        )
        other = await test.client.post("/push/act", json={"capability": token, "action": "delete"})
        extra = await test.client.post(
            "/push/act", json={"capability": token, "action": "done", "seconds": 1}
        )
        garbage = await test.client.post("/push/act", content=b"\x00")
    assert forged.status_code == 403
    assert forged.json()["error"] == {"code": "forbidden", "message": "this link is not valid"}
    assert forged.headers["cache-control"] == "no-store"
    assert [other.status_code, extra.status_code, garbage.status_code] == [422, 422, 422]
    assert garbage.json()["error"]["message"] == "not JSON"
    assert "action" in other.json()["error"]["message"]
    assert test.recorder.reads == [] and test.recorder.runs == []


async def test_what_the_host_refuses_is_passed_on_with_its_status() -> None:
    cases = [
        (ActionError("gone", "that reminder is already gone", status=409), 409, "gone"),
        (SessionNotFound("no Session s-1"), 404, "not_found"),
        (StorageError("the store is down"), 503, "storage_unavailable"),
    ]
    for failure, status, code in cases:
        async with harness() as test:
            test.recorder.fail = failure
            response = await test.client.post(
                "/push/act", json={"capability": capability(test), "action": "snooze"}
            )
        assert (response.status_code, response.json()["error"]["code"]) == (status, code)
        assert response.headers["cache-control"] == "no-store"


async def test_the_service_worker_is_served_for_the_whole_origin() -> None:
    async with harness() as test:
        response = await test.client.get("/sw.js")
    assert response.status_code == 200
    assert response.headers["service-worker-allowed"] == "/"
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.content == SW_PATH.read_bytes()


async def test_before_open_and_after_close_the_routes_say_not_ready() -> None:
    import httpx
    from dsh_notify.webpush import WebPush
    from starlette.applications import Starlette

    from dsh import StorageLocation

    push = WebPush(context(StorageLocation(), Recorder()))
    app = Starlette(routes=push.routes())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        answers = [
            await client.get("/api/push/key"),
            await client.post("/api/push/subscriptions", json={}),
            await client.delete("/api/push/subscriptions/" + "a" * 22),
            await client.post("/push/act", json={}),
        ]
    assert [it.status_code for it in answers] == [503] * 4
    assert {it.json()["error"]["code"] for it in answers} == {"not_ready"}
    assert answers[3].headers["cache-control"] == "no-store"
    assert push.client_modules()[0].path.name == "notify-push.js"
