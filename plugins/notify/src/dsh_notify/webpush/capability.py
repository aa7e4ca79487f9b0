"""The per-alert capability: what a push payload carries so its notification's buttons can act.

A service worker has no access token (the page keeps it in its tab's
sessionStorage, and a push payload passes through the browser vendor's
push service), yet its Snooze and Done buttons must reach the host. Each
payload therefore carries a capability minted for that one alert:

    base64url(JSON claims) "." base64url(HMAC-SHA256(secret, "dsh-notify/act/v1." + claims))

with claims `{"s": session id, "q": alert seq, "e": expiry (epoch s),
"z": the alert's snooze spec or null}`. The secret is kept beside the VAPID
key (`keys.py`), the same on every host of a store. The snooze spec is bound
in the claims rather than looked up again, because the host keeps an
alert's snooze nowhere else a route could read it; since the claims are
MACed, a holder cannot change the plugin, action or arguments it runs.

`verify` checks the MAC in constant time before it parses anything, then
the expiry; it raises `CapabilityError` (one message for every forgery, so
a caller learns nothing about which part was wrong) or returns the claims.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

from dsh import SnoozeAction

from .encoding import b64url, unb64url

__all__ = ["LIFETIME", "MAX_LENGTH", "Capability", "CapabilityError", "mint", "verify"]

LIFETIME = 7 * 24 * 3600
"""Seconds a capability works: a notification may sit unread for days, not for ever."""
MAX_LENGTH = 2048
_DOMAIN = b"dsh-notify/act/v1."


class CapabilityError(Exception):
    """Not a valid capability (forged, altered or expired)."""


@dataclass(frozen=True, slots=True)
class Capability:
    """What a verified capability allows: Snooze (with `snooze`) or Done of alert `seq`."""

    session_id: str
    seq: int
    expires: int
    snooze: SnoozeAction | None


def _mac(secret: bytes, claims: bytes) -> bytes:
    return hmac.new(secret, _DOMAIN + claims, hashlib.sha256).digest()


def mint(
    secret: bytes, *, session_id: str, seq: int, snooze: SnoozeAction | None, now: float
) -> str:
    """A capability for alert `seq` of `session_id`, valid `LIFETIME` seconds from `now`."""
    claims = {
        "s": session_id,
        "q": seq,
        "e": int(now) + LIFETIME,
        "z": None if snooze is None else snooze.model_dump(mode="json"),
    }
    encoded = b64url(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    return f"{encoded}.{b64url(_mac(secret, encoded.encode()))}"


def verify(secret: bytes, token: str, *, now: float) -> Capability:
    """The claims of `token` if its MAC is ours and it has not expired; else `CapabilityError`."""
    forged = CapabilityError("this link is not valid")
    claims_text, dot, mac_text = token.partition(".")
    if not dot or len(token) > MAX_LENGTH:
        raise forged
    try:
        presented = unb64url(mac_text)
    except ValueError:
        raise forged from None
    if not hmac.compare_digest(presented, _mac(secret, claims_text.encode())):
        raise forged
    # From here on the claims are ours: only their age can be wrong.
    claims = json.loads(unb64url(claims_text))
    if claims["e"] <= now:
        raise CapabilityError("this notification has expired; open the conversation instead")
    snooze = None if claims["z"] is None else SnoozeAction.model_validate(claims["z"])
    return Capability(claims["s"], claims["q"], claims["e"], snooze)
