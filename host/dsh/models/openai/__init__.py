"""The `openai` model adapter: any OpenAI-compatible chat-completions server.

DeepSeek, OpenAI, Ollama, vLLM and llama.cpp all speak this protocol. See
`config` for how the server, key and model are chosen from the environment,
`request`/`response`/`sse` for the wire format and `retry` for the policy.
"""

from .adapter import OpenAIAdapter
from .config import ModelConfigError, OpenAIConfig, resolve_config
from .request import SYSTEM_PROMPT
from .retry import RetryPolicy

__all__ = [
    "SYSTEM_PROMPT",
    "ModelConfigError",
    "OpenAIAdapter",
    "OpenAIConfig",
    "RetryPolicy",
    "resolve_config",
]
