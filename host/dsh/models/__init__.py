"""Model adapters: `absent`, `demo`, `scripted`, `openai` (see `base` for the interface).

`resolve_model(spec)` turns a `--model` spec into an adapter (see `registry`).
"""

from .absent import AbsentModel
from .base import (
    DeltaSink,
    Message,
    ModelAdapter,
    ModelReply,
    ModelRequest,
    ReasoningSink,
    StreamSink,
    reasoning_channel,
)
from .demo import DemoModel
from .errors import ModelError, ScriptError
from .registry import MODEL_CHOICES, ModelChoice, resolve_model
from .scripted import ScriptedModel

__all__ = [
    "MODEL_CHOICES",
    "AbsentModel",
    "DeltaSink",
    "DemoModel",
    "Message",
    "ModelAdapter",
    "ModelChoice",
    "ModelError",
    "ModelReply",
    "ModelRequest",
    "ReasoningSink",
    "ScriptError",
    "ScriptedModel",
    "StreamSink",
    "reasoning_channel",
    "resolve_model",
]
