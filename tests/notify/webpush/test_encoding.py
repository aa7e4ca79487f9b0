"""base64url as Web Push spells it."""

from __future__ import annotations

import pytest
from dsh_notify.webpush.encoding import b64url, unb64url


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xfe", b"abcd", bytes(range(65))])
def test_round_trip_without_padding(data: bytes) -> None:
    text = b64url(data)
    assert "=" not in text and "+" not in text and "/" not in text
    assert unb64url(text) == data
    assert unb64url(text + "=" * (-len(text) % 4)) == data


@pytest.mark.parametrize("text", ["a+b/", "a b", "abcde", "é"])
def test_anything_else_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="base64url"):
        unb64url(text)
