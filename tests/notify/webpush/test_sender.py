"""`WebPushChannel` against the stand-in push service: real encryption, real VAPID, real HTTP."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from dsh_notify.channel import Accepted, Gone, Message, Rejected, Retry
from dsh_notify.webpush.capability import verify
from dsh_notify.webpush.sender import MAX_PLAINTEXT, TTL, payload, retry_after, topic

from dsh import SnoozeAction, StorageLocation

from .conftest import harness
from .pushservice import Browser, push_service, vapid_claims

SNOOZE = SnoozeAction(plugin="tool-schedule", action="snooze", args={"dispatchSeq": 7})


def message(**changes: object) -> Message:
    fields: dict[str, object] = {
        "session_id": "s-1",
        "seq": 7,
        "title": "Call mum",
        "body": "Due 14:00, on time",
        "tag": "s-1/r1@1767225600000",
        "at": 1_767_225_600_000,
        "url": "/?session=s-1",
        "snooze": SNOOZE,
    }
    fields.update(changes)
    return Message(**fields)  # type: ignore[arg-type]


async def subscribe(client: httpx.AsyncClient, browser: Browser, endpoint: str) -> str:
    response = await client.post("/api/push/subscriptions", json=browser.subscription(endpoint))
    assert response.status_code == 201, response.text
    identifier: str = response.json()["id"]
    return identifier


async def test_a_push_arrives_encrypted_signed_and_with_the_headers_the_design_names() -> None:
    browser = Browser()
    with push_service() as service:
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, browser, service.url("/push/one"))
            assert await test.push.channel.targets() == [target]
            outcome = await test.push.channel.send(target, message())
            public_key = (await test.client.get("/api/push/key")).json()["publicKey"]
            secret = test.push._opened.keys.secret  # type: ignore[union-attr]
    assert outcome == Accepted()
    [pushed] = service.received
    assert pushed.path == "/push/one"
    shown = browser.open(pushed)
    act = shown.pop("act")
    assert shown == {
        "title": "Call mum",
        "body": "Due 14:00, on time",
        "sessionId": "s-1",
        "tag": "s-1/r1@1767225600000",
        "url": "/?session=s-1",
        "seq": 7,
        "snooze": True,
    }
    allowed = verify(secret, act, now=time.time())
    assert (allowed.session_id, allowed.seq, allowed.snooze) == ("s-1", 7, SNOOZE)
    assert pushed.headers["ttl"] == str(TTL)
    assert pushed.headers["urgency"] == "high"
    assert pushed.headers["topic"] == topic("s-1/r1@1767225600000")
    assert len(pushed.headers["topic"]) == 32
    assert set(pushed.headers["topic"]) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )
    claims = vapid_claims(pushed, public_key)
    assert claims["aud"] == service.base
    assert claims["sub"].startswith("mailto:")
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600


async def test_a_410_removes_the_subscription_and_answers_gone() -> None:
    with push_service() as service:
        service.script = [(410, {})]
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, Browser(), service.url())
            outcome = await test.push.channel.send(target, message())
            assert isinstance(outcome, Gone)
            assert "410" in outcome.reason and "/push" not in outcome.reason
            assert await test.push.channel.targets() == []
            again = await test.push.channel.send(target, message())
    assert again == Gone("the push subscription was removed")
    assert len(service.received) == 1


async def test_a_404_is_gone_too() -> None:
    with push_service() as service:
        service.script = [(404, {})]
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, Browser(), service.url())
            assert isinstance(await test.push.channel.send(target, message()), Gone)
            assert await test.push.channel.targets() == []


async def test_500_twice_then_201_answers_retry_retry_accepted_and_delivers_once() -> None:
    browser = Browser()
    with push_service() as service:
        service.script = [(500, {}), (500, {"Retry-After": "120"})]
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, browser, service.url())
            outcomes = [await test.push.channel.send(target, message()) for _ in range(3)]
    assert outcomes == [
        Retry("the push service 127.0.0.1 answered 500"),
        Retry("the push service 127.0.0.1 answered 500", 120.0),
        Accepted(),
    ]
    # Each attempt is a whole new message; the service kept (and the browser shows) one.
    assert [browser.open(it)["title"] for it in service.received] == ["Call mum"] * 3


async def test_a_429_honours_retry_after_as_an_http_date() -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)
    with push_service() as service:
        service.script = [(429, {"Retry-After": later})]
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, Browser(), service.url())
            outcome = await test.push.channel.send(target, message())
    assert isinstance(outcome, Retry) and outcome.after is not None
    assert 60 < outcome.after <= 90


async def test_another_4xx_is_rejected_and_the_subscription_kept() -> None:
    with push_service() as service:
        service.script = [(403, {})]
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, Browser(), service.url())
            outcome = await test.push.channel.send(target, message())
            assert outcome == Rejected("the push service 127.0.0.1 answered 403")
            assert await test.push.channel.targets() == [target]


async def test_a_push_service_that_is_down_is_retried() -> None:
    with push_service() as service:
        endpoint = service.url()
    async with harness(allow_insecure_endpoints=True) as test:
        target = await subscribe(test.client, Browser(), endpoint)
        outcome = await test.push.channel.send(target, message())
    assert isinstance(outcome, Retry)
    assert outcome.reason == "the push service 127.0.0.1 could not be reached (ConnectError)"


async def test_an_alert_too_large_for_any_push_is_rejected_without_sending() -> None:
    with push_service() as service:
        async with harness(allow_insecure_endpoints=True) as test:
            target = await subscribe(test.client, Browser(), service.url())
            outcome = await test.push.channel.send(target, message(url="/" + "x" * 5000))
    assert isinstance(outcome, Rejected) and "too long" in outcome.reason
    assert service.received == []


def test_a_long_body_is_cut_to_fit_a_push_message_with_an_ellipsis() -> None:
    long = message(body="长" * 2000)
    data = payload(long, "cap")
    assert len(data) <= MAX_PLAINTEXT
    shown = json.loads(data)
    assert shown["body"].endswith("…") and shown["act"] == "cap"
    assert len(shown["body"]) > 1000  # as much as fits, not a token few characters
    # One more character would not have fitted.
    longer = message(body=shown["body"][:-1] + "长" + "…")
    assert len(payload(longer, "cap")) <= MAX_PLAINTEXT  # the cut is stable


def test_when_even_no_body_leaves_room_for_the_buttons_they_go_and_the_body_stays() -> None:
    huge_act = "c" * 3900
    shown = json.loads(payload(message(body="short"), huge_act))
    assert shown["act"] is None and shown["body"] == "short"
    assert shown["snooze"] is False  # no capability, no button


@pytest.mark.parametrize(
    ("header", "expected"),
    [(None, None), ("30", 30.0), (" 5 ", 5.0), ("soon", None), ("Wed, 21 Oct 2015 07:28:00", None)],
)
def test_retry_after_reads_seconds_and_ignores_nonsense(
    header: str | None, expected: float | None
) -> None:
    assert retry_after(header, now=0.0) == expected


def test_retry_after_in_the_past_is_zero() -> None:
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=time.time()) == 0.0


async def test_the_channel_is_there_only_once_opened_and_closing_twice_is_fine() -> None:
    from dsh_notify.webpush import WebPush

    from .conftest import Recorder, context

    push = WebPush(context(StorageLocation(), Recorder()))
    with pytest.raises(RuntimeError, match="open"):
        push.channel  # noqa: B018
    await push.open()
    assert push.channel.name == "webpush"
    await push.aclose()
    await push.aclose()
