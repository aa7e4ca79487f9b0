"""base64url without padding, as Web Push spells keys, salts and tokens (RFC 7515 §2)."""

from __future__ import annotations

import base64
import re

__all__ = ["b64url", "unb64url"]

_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")


def b64url(data: bytes) -> str:
    """`data` as base64url, padding stripped."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """The bytes base64url `text` spells (padding optional); `ValueError` for anything else."""
    stripped = text.rstrip("=")
    if _ALPHABET.fullmatch(stripped) is None or len(stripped) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
