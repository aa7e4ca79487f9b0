"""The README's screenshots can always be regenerated (into a temporary folder here)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.webhost import WebHost

from .make_screenshot import DESKTOP, MOBILE, make_screenshots

pytestmark = pytest.mark.browser

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the IHDR chunk, which a PNG must start with."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE and head[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_make_screenshots_saves_a_desktop_and_a_phone_picture_of_a_fired_reminder(
    browser: Browser, tmp_path: Path, artifact: Callable[[Path], Path]
) -> None:
    with WebHost.start(tmp_path / "data", model="demo") as web:
        paths = make_screenshots(browser, web, tmp_path / "shots")
        sessions = web.get("/api/sessions").json()["sessions"]

    assert [path.name for path in paths] == [MOBILE.name, DESKTOP.name]
    assert png_size(paths[0]) == (MOBILE.width, MOBILE.height)
    assert png_size(paths[1]) == (DESKTOP.width, DESKTOP.height)
    assert len(sessions) == 2
    for path in paths:
        artifact(path)
