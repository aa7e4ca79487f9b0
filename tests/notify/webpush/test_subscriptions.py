"""`POST/DELETE /api/push/subscriptions`: what is kept; hostile bodies refused, nothing stored."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from dsh_notify.webpush.encoding import b64url
from dsh_notify.webpush.subscriptions import (
    SUBSCRIPTIONS_FILE,
    FileSubscriptions,
    SubscriptionStoreError,
)

from dsh import StorageLocation

from .conftest import harness
from .pushservice import Browser

ENDPOINT = "https://push.example.net/send/abc"


def kept(data_dir: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads((data_dir / SUBSCRIPTIONS_FILE).read_text())[
        "subscriptions"
    ]
    return records


async def test_a_subscription_is_kept_in_a_private_file_and_survives_a_restart(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    browser = Browser()
    async with harness(jsonl) as test:
        response = await test.client.post(
            "/api/push/subscriptions", json=browser.subscription(ENDPOINT)
        )
        assert response.status_code == 201
        identifier = response.json()["id"]
    assert stat.S_IMODE(os.stat(tmp_path / SUBSCRIPTIONS_FILE).st_mode) == 0o600
    assert [it["endpoint"] for it in kept(tmp_path)] == [ENDPOINT]
    async with harness(jsonl) as again:
        assert await again.push.channel.targets() == [identifier]


async def test_the_same_endpoint_again_updates_its_keys_under_the_same_id(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    async with harness(jsonl) as test:
        first = await test.client.post(
            "/api/push/subscriptions", json=Browser().subscription(ENDPOINT)
        )
        newer = Browser()
        second = await test.client.post(
            "/api/push/subscriptions", json=newer.subscription(ENDPOINT)
        )
    assert first.json() == second.json()
    assert [it["p256dh"] for it in kept(tmp_path)] == [newer.p256dh]


async def test_delete_forgets_it_then_answers_404_and_a_malformed_id_is_422(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    async with harness(jsonl) as test:
        made = await test.client.post(
            "/api/push/subscriptions", json=Browser().subscription(ENDPOINT)
        )
        identifier = made.json()["id"]
        gone = await test.client.delete(f"/api/push/subscriptions/{identifier}")
        again = await test.client.delete(f"/api/push/subscriptions/{identifier}")
        malformed = await test.client.delete("/api/push/subscriptions/vapid.json")
    assert gone.status_code == 204
    assert kept(tmp_path) == []
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "not_found"
    assert malformed.status_code == 422
    assert malformed.json()["error"]["code"] == "invalid_id"


def hostile() -> list[tuple[str, Any, str]]:
    good = Browser().subscription(ENDPOINT)
    keys = good["keys"]
    off_curve = b64url(b"\x04" + b"\x01" * 64)
    return [
        ("not json", b"{", "not JSON"),
        ("a list", [], "Input should be"),
        ("http endpoint", {**good, "endpoint": "http://push.example.net/x"}, "https://"),
        (
            "10 KB endpoint",
            {**good, "endpoint": "https://push.example.net/" + "a" * 10_000},
            "endpoint",
        ),
        ("no host", {**good, "endpoint": "https:///x"}, "host"),
        ("credentials", {**good, "endpoint": "https://u:p@push.example.net/x"}, "credentials"),
        ("bad port", {**good, "endpoint": "https://push.example.net:99999999/x"}, "not a URL"),
        ("javascript", {**good, "endpoint": "javascript:alert(1)"}, "https://"),
        ("space", {**good, "endpoint": "https://push.example.net/a b"}, "spaces"),
        ("p256dh not b64", {**good, "keys": {**keys, "p256dh": "!!!"}}, "p256dh is not base64url"),
        (
            "p256dh short",
            {**good, "keys": {**keys, "p256dh": b64url(b"\x04" * 33)}},
            "uncompressed",
        ),
        ("p256dh off curve", {**good, "keys": {**keys, "p256dh": off_curve}}, "not a point"),
        ("auth not b64", {**good, "keys": {**keys, "auth": "a*b"}}, "auth is not base64url"),
        ("auth 8 bytes", {**good, "keys": {**keys, "auth": b64url(b"x" * 8)}}, "16 bytes"),
        ("no keys", {"endpoint": ENDPOINT}, "keys"),
        ("extra field", {**good, "admin": True}, "admin"),
        ("number endpoint", {**good, "endpoint": 5}, "endpoint"),
    ]


@pytest.mark.parametrize(("case", "body", "says"), hostile(), ids=[it[0] for it in hostile()])
async def test_a_hostile_body_is_422_with_a_clear_message_and_nothing_is_stored(
    case: str, body: Any, says: str, jsonl: StorageLocation, tmp_path: Path
) -> None:
    async with harness(jsonl) as test:
        if isinstance(body, bytes):
            response = await test.client.post("/api/push/subscriptions", content=body)
        else:
            response = await test.client.post("/api/push/subscriptions", json=body)
        assert await test.push.channel.targets() == []
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_subscription"
    assert says in error["message"]
    assert not (tmp_path / SUBSCRIPTIONS_FILE).exists()


async def test_http_endpoints_are_taken_only_when_the_overlay_allows_them() -> None:
    async with harness(allow_insecure_endpoints=True) as test:
        body = Browser().subscription("http://127.0.0.1:9/push")
        response = await test.client.post("/api/push/subscriptions", json=body)
    assert response.status_code == 201


async def test_the_51st_subscription_is_422_and_not_stored_but_a_known_endpoint_still_updates(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    browser = Browser()
    async with harness(jsonl) as test:
        for number in range(50):
            body = browser.subscription(f"{ENDPOINT}/{number}")
            assert (await test.client.post("/api/push/subscriptions", json=body)).status_code == 201
        refused = await test.client.post(
            "/api/push/subscriptions", json=browser.subscription(f"{ENDPOINT}/50")
        )
        update = await test.client.post(
            "/api/push/subscriptions", json=Browser().subscription(f"{ENDPOINT}/0")
        )
    assert refused.status_code == 422
    assert refused.json()["error"] == {
        "code": "too_many_subscriptions",
        "message": "this host already keeps 50 push subscriptions, its limit "
        "(max_subscriptions); remove one before adding another",
    }
    assert update.status_code == 201
    assert len(kept(tmp_path)) == 50
    assert f"{ENDPOINT}/50" not in {it["endpoint"] for it in kept(tmp_path)}


async def test_a_write_that_fails_is_503_and_changes_nothing(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    async with harness(jsonl) as test:
        made = await test.client.post(
            "/api/push/subscriptions", json=Browser().subscription(ENDPOINT)
        )
        # The file's place taken by a non-empty directory: the rename over it fails.
        (tmp_path / SUBSCRIPTIONS_FILE).unlink()
        (tmp_path / SUBSCRIPTIONS_FILE).mkdir()
        (tmp_path / SUBSCRIPTIONS_FILE / "x").touch()
        added = await test.client.post(
            "/api/push/subscriptions", json=Browser().subscription(ENDPOINT + "/2")
        )
        removed = await test.client.delete(f"/api/push/subscriptions/{made.json()['id']}")
        targets = await test.push.channel.targets()
    assert (added.status_code, removed.status_code) == (503, 503)
    assert added.json()["error"]["code"] == "storage_unavailable"
    assert "cannot write" in added.json()["error"]["message"]
    assert targets == [made.json()["id"]]
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".tmp")]


def test_an_unreadable_subscriptions_file_is_a_clear_error_and_kept(tmp_path: Path) -> None:
    path = tmp_path / SUBSCRIPTIONS_FILE
    record = b'{"id": 1, "endpoint": "e", "p256dh": "p", "auth": "a"}'
    for text in (
        b"{",
        b'{"subscriptions": [{"id": 1}]}',
        b'{"subscriptions": [%s]}' % record,
        b"[]",
    ):
        path.write_bytes(text)
        with pytest.raises(SubscriptionStoreError, match="unreadable"):
            FileSubscriptions(path).load()
        assert path.read_bytes() == text


def test_a_subscriptions_file_that_cannot_be_read_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / SUBSCRIPTIONS_FILE).mkdir()
    with pytest.raises(SubscriptionStoreError, match="cannot read"):
        FileSubscriptions(tmp_path / SUBSCRIPTIONS_FILE).load()


async def test_posts_at_once_never_pass_the_limit_nor_lose_a_write(
    jsonl: StorageLocation, tmp_path: Path
) -> None:
    import anyio

    answers: list[int] = []
    async with harness(jsonl, max_subscriptions=5) as test:

        async def post(number: int) -> None:
            body = Browser().subscription(f"{ENDPOINT}/{number}")
            answers.append(
                (await test.client.post("/api/push/subscriptions", json=body)).status_code
            )

        async with anyio.create_task_group() as group:
            for number in range(12):
                group.start_soon(post, number)
        targets = await test.push.channel.targets()
    assert sorted(answers) == [201] * 5 + [422] * 7
    assert len(targets) == 5
    assert sorted(it["id"] for it in kept(tmp_path)) == sorted(targets)


async def test_a_browsers_expiration_time_is_accepted_and_ignored() -> None:
    body = {**Browser().subscription(ENDPOINT), "expirationTime": 1_767_225_600_000}
    async with harness() as test:
        response = await test.client.post("/api/push/subscriptions", json=body)
    assert response.status_code == 201
