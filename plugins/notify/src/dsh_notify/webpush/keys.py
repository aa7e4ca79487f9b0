"""`VapidKeys`: this host's VAPID key pair (RFC 8292) and the capability secret, made once and kept.

A push service ties a subscription to the public key the page subscribed
with, so the pair must outlive restarts (a new pair silently orphans every
subscription) and be the same on every host of one store:

- JSONL: `<data-dir>/vapid.json`, mode 0600, written atomically
  (`files.write_private`). Missing → a new pair is made and written. Present
  but unreadable (not JSON, wrong fields, not a P-256 key) → `VapidKeyError`
  at start-up: never replaced, since that would orphan the subscriptions the
  file's key made.
- PostgreSQL: the table `notify_vapid` (`postgres.PostgresRecords`): two
  hosts starting at once agree on one pair (insert if absent, then read).
- memory: a pair for this process only.

Beside the pair, a 32-byte `secret` keys the HMAC of the per-alert
capability (`capability.py`): kept with the private key because it is just
as private and must be the same on every host.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from .encoding import b64url, unb64url
from .files import write_private

__all__ = [
    "KEY_FILE",
    "VapidKeyError",
    "VapidKeys",
    "load_key_file",
    "read_key_file",
    "write_key_file",
]

KEY_FILE = "vapid.json"
SECRET_BYTES = 32


class VapidKeyError(Exception):
    """The kept key pair cannot be read; the message names where it is and what is wrong."""


@dataclass(frozen=True, slots=True)
class VapidKeys:
    """A P-256 private key (the VAPID signer) and the capability secret."""

    private_key: ec.EllipticCurvePrivateKey
    secret: bytes

    @classmethod
    def new(cls) -> VapidKeys:
        """A fresh pair and secret."""
        return cls(ec.generate_private_key(ec.SECP256R1()), secrets.token_bytes(SECRET_BYTES))

    @property
    def public_key(self) -> str:
        """The public key as `GET /api/push/key` gives it: base64url of the uncompressed point."""
        point = self.private_key.public_key().public_bytes(
            Encoding.X962, PublicFormat.UncompressedPoint
        )
        return b64url(point)

    def to_record(self) -> dict[str, Any]:
        """The stored form: `{"version": 1, "privateKey", "secret"}` (base64url)."""
        scalar = self.private_key.private_numbers().private_value.to_bytes(32, "big")
        return {"version": 1, "privateKey": b64url(scalar), "secret": b64url(self.secret)}

    @classmethod
    def from_record(cls, record: object) -> VapidKeys:
        """The inverse of `to_record`; `ValueError` naming the first thing wrong."""
        if not isinstance(record, dict) or record.get("version") != 1:
            raise ValueError("expected an object with version 1")
        scalar, secret = record.get("privateKey"), record.get("secret")
        if not isinstance(scalar, str) or not isinstance(secret, str):
            raise ValueError("privateKey and secret must be base64url strings")
        raw = unb64url(scalar)
        if len(raw) != 32:
            raise ValueError("privateKey is not a 32-byte P-256 scalar")
        key = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
        kept = unb64url(secret)
        if len(kept) != SECRET_BYTES:
            raise ValueError(f"secret is not {SECRET_BYTES} bytes")
        return cls(key, kept)


def load_key_file(data_dir: Path) -> VapidKeys:
    """The pair kept in `data_dir/vapid.json`, made and written first if absent.

    Raises `VapidKeyError` when the file exists but cannot be read or parsed
    (it is left as it is), or when a new one cannot be written.
    """
    keys = read_key_file(data_dir)
    if keys is None:
        keys = VapidKeys.new()
        write_key_file(data_dir, keys)
    return keys


def read_key_file(data_dir: Path) -> VapidKeys | None:
    """The pair kept in `data_dir/vapid.json`, None when there is none.

    Raises `VapidKeyError` when the file exists but cannot be read or parsed
    (it is left as it is).
    """
    path = data_dir / KEY_FILE
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as problem:
        raise VapidKeyError(f"cannot read the Web Push key pair {path}: {problem}") from None
    try:
        keys = VapidKeys.from_record(json.loads(text))
    except ValueError as problem:  # json.JSONDecodeError and UnicodeDecodeError included
        raise VapidKeyError(
            f"the Web Push key pair {path} is unreadable ({problem}); it is kept as it is — "
            "restore it from a backup, or move it away to make a new pair "
            "(every browser must then subscribe again)"
        ) from None
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)  # a copy restored with looser permissions is private again
    return keys


def write_key_file(data_dir: Path, keys: VapidKeys) -> None:
    """Make `data_dir/vapid.json` hold `keys` (0600, atomically); `VapidKeyError` if it cannot."""
    path = data_dir / KEY_FILE
    try:
        write_private(path, json.dumps(keys.to_record()).encode())
    except OSError as problem:
        raise VapidKeyError(f"cannot write the Web Push key pair {path}: {problem}") from None
