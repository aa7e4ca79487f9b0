from __future__ import annotations

import pytest
from pydantic import ValidationError

from dsh.web.settings import STATIC_DIR, WebSettings


def test_settings_default_to_loopback_port_8765_and_one_mebibyte() -> None:
    settings = WebSettings(token="t")
    assert (settings.host, settings.port, settings.max_body_bytes) == ("127.0.0.1", 8765, 1 << 20)
    assert settings.static_dir == STATIC_DIR
    assert (STATIC_DIR / "index.html").is_file()


def test_connection_limits_default_to_10_s_heads_30_s_bodies_1024_and_128() -> None:
    settings = WebSettings(token="t")
    assert (settings.header_timeout, settings.body_timeout) == (10.0, 30.0)
    assert (settings.max_connections, settings.max_unauthenticated) == (1024, 128)
    assert settings.access_log is False


@pytest.mark.parametrize(
    "changes",
    [
        {"token": ""},
        {"port": 70000},
        {"max_body_bytes": 0},
        {"unknown": 1},
        {"port": "80"},
        {"header_timeout": 0.0},
        {"body_timeout": -1.0},
        {"max_connections": 1},
        {"max_unauthenticated": 0},
    ],
)
def test_settings_are_strict(changes: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        WebSettings(**{"token": "t", **changes})  # type: ignore[arg-type]
