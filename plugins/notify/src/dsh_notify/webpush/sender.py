"""`WebPushChannel`: the `Channel` named "webpush" — one alert, encrypted, to one subscription.

`targets()` are the kept subscriptions' ids. `send(id, message)`:

- builds the plaintext JSON `{"title", "body", "sessionId", "tag", "url"}`
  (DESIGN §14.2) plus what the worker needs for its buttons: `"seq"`,
  `"act"` (the alert's capability, `capability.py`, or null) and `"snooze"`
  (whether the alert can be snoozed: the Snooze button shows only then). A push service takes
  at most 4096 bytes of ciphertext, so a body too long for that is cut
  (with "…"), and if even the empty body does not fit the buttons go;
- encrypts it for the subscription (RFC 8291 aes128gcm, pywebpush's
  `WebPusher.encode`), signs a VAPID JWT (RFC 8292, py_vapid) with
  `aud` = the endpoint's origin, `sub` = `SUBJECT`, 12 h expiry;
- POSTs it with httpx (no redirects followed) and headers `TTL` (one day:
  a reminder older than that is news no longer), `Urgency: high`, and a
  `Topic` of 32 base64url characters hashed from the tag, so a push
  service keeps only the newest message of one occurrence while the phone
  is offline.

What the push service answers becomes the outcome: 2xx `Accepted`; 404 or
410 `Gone`, and the subscription is forgotten at once (the browser dropped
it); 429 and 5xx `Retry`, with `Retry-After` (seconds or an HTTP date)
when given; a network error or timeout `Retry`; any other 4xx (400 a
malformed request, 403 a key mismatch, 413 too large) `Rejected`. Reasons
name the push service's host and status, never the endpoint's path (it is
the subscription's secret) or a key.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

import httpx
from py_vapid import Vapid02
from pywebpush import WebPusher

from ..channel import Accepted, Gone, Message, Outcome, Rejected, Retry
from .capability import mint
from .encoding import b64url
from .keys import VapidKeys
from .subscriptions import SubscriptionStore

__all__ = ["MAX_PLAINTEXT", "SUBJECT", "TTL", "WebPushChannel", "payload", "retry_after", "topic"]

SUBJECT = "mailto:dsh@localhost"
"""The VAPID `sub` claim: a contact the push service may write to (RFC 8292 §2.1)."""
TTL = 24 * 3600
MAX_PLAINTEXT = 3993
"""4096 bytes of aes128gcm record minus its 86-byte header, 16-byte tag and 1 delimiter."""
JWT_LIFETIME = 12 * 3600


def topic(tag: str) -> str:
    """The `Topic` header for `tag`: 32 URL-safe characters (RFC 8030 §5.4)."""
    return b64url(hashlib.sha256(tag.encode()).digest())[:32]


def payload(message: Message, act: str | None) -> bytes:
    """The plaintext for `message`, at most `MAX_PLAINTEXT` bytes (see the module docstring).

    Raises `ValueError` when even its title, tag and url alone do not fit.
    """
    for token in (act, None):
        data = _fit(message, token)
        if data is not None:
            return data
    raise ValueError("the alert's title, tag and url alone are too long for a push message")


def _fit(message: Message, act: str | None) -> bytes | None:
    """The payload with as much of the body as fits (cut with "…"), or None if none does."""

    def encoded(body: str) -> bytes:
        fields = {
            "title": message.title,
            "body": body,
            "sessionId": message.session_id,
            "tag": message.tag,
            "url": message.url,
            "seq": message.seq,
            "act": act,
            "snooze": act is not None and message.snooze is not None,
        }
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()

    whole = encoded(message.body)
    if len(whole) <= MAX_PLAINTEXT:
        return whole
    best: bytes | None = None
    low, high = 0, len(message.body) - 1
    while low <= high:  # the longest prefix that fits, by bisection
        middle = (low + high) // 2
        data = encoded(message.body[:middle] + "…")
        if len(data) <= MAX_PLAINTEXT:
            best, low = data, middle + 1
        else:
            high = middle - 1
    return best


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` header asks to wait (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now) if when.tzinfo is not None else None


class WebPushChannel:
    """The "webpush" channel of one host (see the module docstring)."""

    name = "webpush"

    def __init__(
        self,
        store: SubscriptionStore,
        keys: VapidKeys,
        client: httpx.AsyncClient,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._keys = keys
        self._vapid = Vapid02(private_key=keys.private_key)
        self._client = client
        self._clock = clock

    async def targets(self) -> Sequence[str]:
        """The ids of the kept subscriptions."""
        return [it.id for it in await self._store.all()]

    async def send(self, target: str, message: Message) -> Outcome:
        """Push `message` to subscription `target` (see the module docstring)."""
        subscription = await self._store.get(target)
        if subscription is None:
            return Gone("the push subscription was removed")
        now = self._clock()
        act = mint(
            self._keys.secret,
            session_id=message.session_id,
            seq=message.seq,
            snooze=message.snooze,
            now=now,
        )
        try:
            data = payload(message, act)
        except ValueError as problem:
            return Rejected(str(problem))
        body = WebPusher(subscription.info()).encode(data, "aes128gcm")["body"]
        parts = urlsplit(subscription.endpoint)
        origin = f"{parts.scheme}://{parts.netloc}"
        claims = {"sub": SUBJECT, "aud": origin, "exp": int(now) + JWT_LIFETIME}
        headers = {
            **self._vapid.sign(claims),
            "TTL": str(TTL),
            "Urgency": "high",
            "Topic": topic(message.tag),
            "Content-Encoding": "aes128gcm",
            "Content-Type": "application/octet-stream",
        }
        service = parts.hostname
        try:
            response = await self._client.post(subscription.endpoint, content=body, headers=headers)
        except httpx.HTTPError as problem:
            return Retry(
                f"the push service {service} could not be reached ({type(problem).__name__})"
            )
        status = response.status_code
        if 200 <= status < 300:
            return Accepted()
        said = f"the push service {service} answered {status}"
        if status in (404, 410):
            await self._store.remove(target)
            return Gone(f"{said}: the browser dropped this subscription; it is removed")
        if status == 429 or status >= 500:
            return Retry(said, retry_after(response.headers.get("retry-after"), now))
        return Rejected(said)
