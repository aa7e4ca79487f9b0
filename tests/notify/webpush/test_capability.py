"""The per-alert capability: only its alert, only until it expires, only with our secret."""

from __future__ import annotations

import secrets

import pytest
from dsh_notify.webpush.capability import LIFETIME, CapabilityError, mint, verify
from dsh_notify.webpush.encoding import b64url, unb64url

from dsh import SnoozeAction

SECRET = secrets.token_bytes(32)
SNOOZE = SnoozeAction(plugin="tool-schedule", action="snooze", args={"dispatchSeq": 3})


def test_a_capability_names_its_alert_and_snooze_until_it_expires() -> None:
    token = mint(SECRET, session_id="s-1", seq=3, snooze=SNOOZE, now=1000.0)
    allowed = verify(SECRET, token, now=1000.0 + LIFETIME - 1)
    assert (allowed.session_id, allowed.seq, allowed.snooze, allowed.expires) == (
        "s-1",
        3,
        SNOOZE,
        1000 + LIFETIME,
    )
    assert (
        verify(SECRET, mint(SECRET, session_id="s", seq=1, snooze=None, now=0), now=1).snooze
        is None
    )
    with pytest.raises(CapabilityError, match="expired"):
        verify(SECRET, token, now=1000.0 + LIFETIME)


def altered(token: str) -> list[str]:
    claims, _, mac = token.partition(".")
    decoded = unb64url(claims).replace(b'"q":3', b'"q":4')
    other_mac = b64url(bytes(32))
    return [
        f"{b64url(decoded)}.{mac}",  # another alert, same MAC
        f"{claims}.{other_mac}",  # a made-up MAC
        f"{claims}.{mac[:-2]}",  # a cut MAC
        f"{claims}.{mac}!",  # not base64url
        claims,  # no MAC at all
        f"{claims}.{mac}" + "A" * 3000,  # too long
        mint(secrets.token_bytes(32), session_id="s-1", seq=3, snooze=SNOOZE, now=1000.0),
    ]


def test_an_altered_or_foreign_capability_is_refused_with_one_message() -> None:
    token = mint(SECRET, session_id="s-1", seq=3, snooze=SNOOZE, now=1000.0)
    for forged in altered(token):
        with pytest.raises(CapabilityError) as raised:
            verify(SECRET, forged, now=1000.0)
        assert str(raised.value) == "this link is not valid"
