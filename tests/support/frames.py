"""What a live subscription has queued, read without waiting."""

from __future__ import annotations

import json
from typing import Any

import anyio

from dsh.web.live import Subscription

__all__ = ["drain"]


def drain(subscription: Subscription) -> list[dict[str, Any]]:
    """Every frame `subscription` has queued, decoded, oldest first (nothing waits)."""
    frames: list[dict[str, Any]] = []
    while True:
        try:
            frames.append(json.loads(subscription.frames.receive_nowait()))
        except (anyio.WouldBlock, anyio.EndOfStream):
            return frames
