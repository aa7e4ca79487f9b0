"""Streaming a finished reply through `on_delta`, for adapters that answer whole.

Offline adapters (demo, scripted) know their full answer at once; they still
stream it in a few fragments so that hosts and tests exercise the same delta
path a network model uses: the reasoning first (on its own channel, when the
caller listens to it), then the answer. The fragments always concatenate to
the text.
"""

from __future__ import annotations

import anyio

from .base import DeltaSink, ModelReply, reasoning_channel

__all__ = ["fragments", "stream_reply", "stream_text"]


def fragments(text: str, pieces: int = 3) -> list[str]:
    """Split `text` into at most `pieces` consecutive, non-empty parts of near-equal length."""
    if pieces < 1:
        raise ValueError("pieces must be at least 1")
    size = -(-len(text) // pieces)  # ceiling division; 0 for an empty text
    return [text[start : start + size] for start in range(0, len(text), size or 1)]


async def stream_text(text: str, on_delta: DeltaSink | None, pieces: int = 3) -> None:
    """Report `text` to `on_delta` in fragments, yielding to the loop between them."""
    if on_delta is None:
        return
    for fragment in fragments(text, pieces):
        on_delta(fragment)
        await anyio.lowlevel.checkpoint()


async def stream_reply(reply: ModelReply, on_delta: DeltaSink | None, pieces: int = 3) -> None:
    """Report `reply`'s reasoning (to `reasoning_channel(on_delta)`), then its text."""
    if reply.reasoning:
        await stream_text(reply.reasoning, reasoning_channel(on_delta), pieces)
    await stream_text(reply.text, on_delta, pieces)
