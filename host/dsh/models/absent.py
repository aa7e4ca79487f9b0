"""The `absent` model: what a host runs with when no model is configured.

Every call fails with `ModelError("model_unavailable", ...)`, so each turn ends
with `turn/end {status: "error"}` and a message that says how to pick a model.
Nothing before the failure is lost: plugins' own events (a reminder's dispatch,
for one) stay in the log.
"""

from __future__ import annotations

import anyio

from .base import DeltaSink, ModelReply, ModelRequest
from .errors import ModelError

__all__ = ["UNAVAILABLE", "AbsentModel"]

UNAVAILABLE = "model_unavailable"


class AbsentModel:
    """A model adapter that never answers."""

    name = "absent"
    description = "absent (no model: every turn ends saying so)"

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason or (
            "no model is configured; start dsh with --model demo|openai|scripted:PATH "
            "(demo is the offline default; openai reads DSH_API_KEY, DSH_MODEL_BASE_URL "
            "and DSH_MODEL)"
        )

    async def complete(
        self, request: ModelRequest, on_delta: DeltaSink | None = None
    ) -> ModelReply:
        """Always raises `ModelError("model_unavailable", reason)` (after one checkpoint)."""
        await anyio.lowlevel.checkpoint()
        raise ModelError(UNAVAILABLE, self.reason)
