"""The note's overlay never loads dsh-notify: with it, nothing leaves the machine."""

from __future__ import annotations

import tomllib

from tests.support.webhost import OVERLAY


def test_the_notes_overlay_does_not_load_notify() -> None:
    overlay = tomllib.loads((OVERLAY / "overlay.toml").read_text(encoding="utf-8"))
    assert "notify" not in overlay.get("plugins", {})
    assert set(overlay["plugins"]) == {"tool-schedule", "client-ui-schedule"}
