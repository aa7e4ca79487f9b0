"""Model adapters: `absent`, `demo`, `scripted`, `openai` (see `base` for the interface)."""

from .base import DeltaSink, Message, ModelAdapter, ModelError, ModelReply, ModelRequest

__all__ = ["DeltaSink", "Message", "ModelAdapter", "ModelError", "ModelReply", "ModelRequest"]
