"""Push subscriptions: what a browser posts, checked at the boundary, and where they are kept.

`SubscriptionBody` parses `PushSubscription.toJSON()` strictly:

- `endpoint`: an absolute URL of at most 2048 characters with a host,
  `https://` unless the overlay sets `allow_insecure_endpoints` (then
  `http://` too: loopback tests), no credentials in it;
- `keys.p256dh`: base64url of an uncompressed P-256 point that loads as a
  public key (65 bytes, 0x04 first, on the curve);
- `keys.auth`: base64url of exactly 16 bytes;
- `expirationTime` (null or a number) is accepted and ignored; nothing else.

A `SubscriptionStore` keeps them, at most `limit`: `add` of an endpoint
already kept updates its keys under the same id (a browser re-subscribing
is not a second subscription); a new endpoint beyond the limit raises
`TooManySubscriptions` and stores nothing. Ids are random, URL-safe, 22
characters (`ID_PATTERN`): an id says nothing about its endpoint.

`FileSubscriptions` keeps them in memory and, on a JSONL data dir, in
`<data-dir>/push-subscriptions.json` (0600, rewritten atomically on each
change, in a worker thread: there are at most a few dozen). Changes take
turns (a lock), so two posts at once cannot both pass the limit or lose
each other's write. The PostgreSQL store is
`postgres.PostgresRecords`.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Protocol
from urllib.parse import urlsplit

import anyio
from cryptography.hazmat.primitives.asymmetric import ec
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from .encoding import unb64url
from .files import write_private

__all__ = [
    "ID_PATTERN",
    "SUBSCRIPTIONS_FILE",
    "FileSubscriptions",
    "Subscription",
    "SubscriptionBody",
    "SubscriptionStore",
    "SubscriptionStoreError",
    "TooManySubscriptions",
    "new_id",
]

SUBSCRIPTIONS_FILE = "push-subscriptions.json"
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{22}")
MAX_ENDPOINT = 2048


def new_id() -> str:
    """A fresh subscription id (128 random bits)."""
    return secrets.token_urlsafe(16)


class TooManySubscriptions(Exception):
    """The store already holds its limit of subscriptions."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"this host already keeps {limit} push subscriptions, its limit "
            "(max_subscriptions); remove one before adding another"
        )


class SubscriptionStoreError(Exception):
    """The kept subscriptions cannot be read or written; the message says where and why."""


class _Keys(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    p256dh: Annotated[str, StringConstraints(max_length=200)]
    auth: Annotated[str, StringConstraints(max_length=100)]

    @field_validator("p256dh")
    @classmethod
    def _point(cls, value: str) -> str:
        try:
            raw = unb64url(value)
        except ValueError:
            raise ValueError("keys.p256dh is not base64url") from None
        if len(raw) != 65 or raw[0] != 4:
            raise ValueError("keys.p256dh is not an uncompressed P-256 point (65 bytes, 04 first)")
        try:
            ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
        except ValueError:
            raise ValueError("keys.p256dh is not a point on P-256") from None
        return value

    @field_validator("auth")
    @classmethod
    def _auth(cls, value: str) -> str:
        try:
            raw = unb64url(value)
        except ValueError:
            raise ValueError("keys.auth is not base64url") from None
        if len(raw) != 16:
            raise ValueError("keys.auth is not 16 bytes")
        return value


class SubscriptionBody(BaseModel):
    """`POST /api/push/subscriptions`'s body (see the module docstring).

    Validate with `context={"allow_insecure": bool}`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    endpoint: Annotated[str, StringConstraints(min_length=1, max_length=MAX_ENDPOINT)]
    keys: _Keys
    expirationTime: float | None = Field(default=None)  # the browser's own name

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str, info: ValidationInfo) -> str:
        allow_insecure = bool((info.context or {}).get("allow_insecure", False))
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 — raises ValueError for a port that is not a number
        except ValueError:
            raise ValueError("endpoint is not a URL") from None
        schemes = ("https", "http") if allow_insecure else ("https",)
        if parts.scheme not in schemes:
            raise ValueError(
                "endpoint must be an https:// URL"
                + ("" if allow_insecure else " (allow_insecure_endpoints is off)")
            )
        if not parts.hostname or parts.username is not None or parts.password is not None:
            raise ValueError("endpoint must name a host and carry no credentials")
        if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in value):
            raise ValueError("endpoint contains spaces or control characters")
        return value


@dataclass(frozen=True, slots=True)
class Subscription:
    """One kept subscription: `id` and what pywebpush needs to reach it."""

    id: str
    endpoint: str
    p256dh: str
    auth: str

    def info(self) -> dict[str, object]:
        """The `subscription_info` shape pywebpush takes."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


class SubscriptionStore(Protocol):
    """Where subscriptions are kept (see the module docstring)."""

    async def all(self) -> Sequence[Subscription]: ...

    async def get(self, subscription_id: str) -> Subscription | None: ...

    async def add(self, body: SubscriptionBody, limit: int) -> str:
        """Keep `body` (same endpoint → same id, updated); its id. Raises `TooManySubscriptions`."""
        ...

    async def remove(self, subscription_id: str) -> bool:
        """Forget that subscription; False when there was none."""
        ...


class FileSubscriptions:
    """Subscriptions in memory, mirrored to a file when `path` is given (module docstring)."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._kept: dict[str, Subscription] = {}
        self._turn = anyio.Lock()

    def load(self) -> None:
        """Read the file (absent = none kept). Raises `SubscriptionStoreError` when unreadable."""
        if self._path is None:
            return
        try:
            text = self._path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as problem:
            raise SubscriptionStoreError(f"cannot read {self._path}: {problem}") from None
        try:
            records = json.loads(text)["subscriptions"]
            kept = [Subscription(**record) for record in records]
            if not all(isinstance(getattr(it, name), str) for it in kept for name in it.__slots__):
                raise TypeError("a field is not a string")
        except (ValueError, TypeError, KeyError) as problem:
            raise SubscriptionStoreError(
                f"the push subscriptions in {self._path} are unreadable ({problem!r}); "
                "the file is kept as it is: move it away to start with none"
            ) from None
        self._kept = {it.id: it for it in kept}

    async def all(self) -> Sequence[Subscription]:
        return list(self._kept.values())

    async def get(self, subscription_id: str) -> Subscription | None:
        return self._kept.get(subscription_id)

    async def add(self, body: SubscriptionBody, limit: int) -> str:
        async with self._turn:
            same = next((it for it in self._kept.values() if it.endpoint == body.endpoint), None)
            if same is None and len(self._kept) >= limit:
                raise TooManySubscriptions(limit)
            kept = Subscription(
                id=new_id() if same is None else same.id,
                endpoint=body.endpoint,
                p256dh=body.keys.p256dh,
                auth=body.keys.auth,
            )
            await self._save({**self._kept, kept.id: kept})
            return kept.id

    async def keep(self, subscriptions: Sequence[Subscription]) -> int:
        """Keep each of `subscriptions` whose endpoint (and id) is not kept yet, as it is.

        No limit: `dsh store copy` moves subscriptions another store accepted.
        How many were kept; `SubscriptionStoreError` (keeping none) if the file cannot be written.
        """
        async with self._turn:
            kept = dict(self._kept)
            endpoints = {it.endpoint for it in kept.values()}
            for it in subscriptions:
                if it.endpoint not in endpoints and it.id not in kept:
                    kept[it.id] = it
                    endpoints.add(it.endpoint)
            added = len(kept) - len(self._kept)
            if added:
                await self._save(kept)
            return added

    async def remove(self, subscription_id: str) -> bool:
        async with self._turn:
            if subscription_id not in self._kept:
                return False
            await self._save({key: it for key, it in self._kept.items() if key != subscription_id})
            return True

    async def _save(self, kept: dict[str, Subscription]) -> None:
        """Write `kept` first, then adopt it: a failed write changes nothing."""
        if self._path is not None:
            text = json.dumps({"version": 1, "subscriptions": [asdict(it) for it in kept.values()]})
            try:
                await anyio.to_thread.run_sync(write_private, self._path, text.encode())
            except OSError as problem:
                raise SubscriptionStoreError(f"cannot write {self._path}: {problem}") from None
        self._kept = kept
