"""The `openai` model adapter: any OpenAI-compatible chat-completions server.

DeepSeek, OpenAI, Ollama, vLLM and llama.cpp all speak this protocol; what
differs between them is declared once per family in `profiles`. See `config`
for the `[host.openai]` settings and how the server, key and model are chosen
from the environment, `request`/`response`/`sse` for the wire format and
`retry` for the policy.
"""

from ..errors import ModelConfigError
from .adapter import OpenAIAdapter
from .config import OpenAIConfig, OpenAISettings, resolve_config
from .profiles import PROFILES, Profile, detect_profile
from .request import SYSTEM_PROMPT
from .retry import RetryPolicy

__all__ = [
    "PROFILES",
    "SYSTEM_PROMPT",
    "ModelConfigError",
    "OpenAIAdapter",
    "OpenAIConfig",
    "OpenAISettings",
    "Profile",
    "RetryPolicy",
    "detect_profile",
    "resolve_config",
]
