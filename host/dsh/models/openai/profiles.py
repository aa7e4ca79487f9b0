"""Provider profiles: what differs between OpenAI-compatible servers, declared once per family.

Every family speaks chat completions; they differ in a few declared facts:

- `deepseek`: https://api.deepseek.com, model `deepseek-v4-flash`; reasoning
  streamed in `reasoning_content` and passed back (below).
- `openai`: https://api.openai.com/v1, model `gpt-5-mini`; chat completions
  streams no reasoning, and nothing is passed back (it refuses unknown fields).
- `ollama`: http://127.0.0.1:11434/v1, the model named by `DSH_MODEL`;
  reasoning in `reasoning` (else `thinking`), never passed back (not needed).
- `generic`: any other server (`DSH_MODEL_BASE_URL`, `DSH_MODEL`); reasoning
  in `reasoning_content` (vLLM, llama.cpp) or `reasoning`; `reasoning_content`
  is echoed back once the server has streamed it (below).

**Choosing a profile** (`detect_profile`): the server's address decides when
it names a provider (its own host, or Ollama's port on this machine). When it
does not — a gateway, a proxy, a self-hosted server — a model whose name is
DeepSeek's (`deepseek-v4-pro`, `deepseek/deepseek-v4-pro`,
`deepseek-ai/DeepSeek-V4`: the last path segment starts with `deepseek`) gets
the `deepseek` profile, so its tool calls are not refused for want of the
pass-back; any other name gets `generic`.

**Pass-back (DeepSeek thinking mode).** DeepSeek documents that between two
user messages in which the model called tools, the assistant messages'
`reasoning_content` must take part in every later request (the API answers
HTTP 400 "The reasoning_content in the thinking mode must be passed back to
the API" otherwise), while for turns without tool calls it is ignored. So
the `deepseek` profile sends `reasoning_content` on every assistant message of
a turn that made tool calls — the stored reasoning, or `""` when none was
stored (an older event, or thinking was off) — and on no other message.

**Echo (any other server).** The same rule protects a server that behaves
like DeepSeek under another name (a gateway alias, Kimi, GLM): the `generic`
profile's `echo` field, `reasoning_content`, is passed back by the same rule
once the adapter has seen this server stream reasoning in that very field.
A server that never streams it is never sent it (OpenAI refuses unknown
fields; Groq streams `reasoning` and refuses `reasoning_content`). The adapter
holds that knowledge (see `adapter`), and learns it again after a restart
from the server's own refusal.

**Thinking switch and effort.** `thinking = "enabled" | "disabled"` is sent
as DeepSeek documents it (`{"thinking": {"type": ...}}` in the body; on by
default) and, for Ollama, as `reasoning_effort = "none"` when disabled
(enabled leaves the model's default). OpenAI and generic servers have no
documented switch, so setting `thinking` for them is a configuration error
rather than a guess. `reasoning_effort` is checked against the values each
provider documents (any value for `generic`).

**Ignored parameters.** A thinking model ignores (DeepSeek) or refuses
(OpenAI's reasoning models) sampling parameters, so `temperature` and
`top_p` are not sent while thinking is on: for DeepSeek unless
`thinking = "disabled"`, for OpenAI when a `reasoning_effort` other than
`none` is set.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import httpx

__all__ = [
    "DEEPSEEK",
    "GENERIC",
    "OLLAMA",
    "OPENAI",
    "PROFILES",
    "Profile",
    "ProfileName",
    "Thinking",
    "detect_profile",
    "is_deepseek_model",
    "is_loopback",
]

ProfileName = Literal["deepseek", "openai", "ollama", "generic"]
Thinking = Literal["enabled", "disabled"]
# How a profile sends `thinking`: DeepSeek's body object, Ollama's "none" effort, or not at all.
ThinkingSwitch = Literal["body", "effort", "none"]
# When a profile's model is thinking: unless switched off (DeepSeek), or only with an effort.
ThinkingDefault = Literal["on", "with_effort"]

_OLLAMA_PORT = 11434


@dataclass(frozen=True, slots=True)
class Profile:
    """One provider family's facts (see the module docstring for the table).

    `key_variable` is the environment variable holding the provider's own key;
    it is sent only to the profile's own host (`host`), whatever the profile.
    `pass_back` is the field reasoning always goes back in; `echo` the one it
    goes back in once the server has been seen to stream it there.
    """

    name: ProfileName
    label: str
    base_url: str | None
    model: str | None
    reasoning_fields: tuple[str, ...]
    pass_back: str | None
    thinking_switch: ThinkingSwitch
    thinking_default: ThinkingDefault
    efforts: frozenset[str] | None
    ignored_when_thinking: tuple[str, ...] = ()
    key_variable: str | None = None
    echo: str | None = None

    @property
    def host(self) -> str | None:
        """The host of the profile's own server, if it has one."""
        return httpx.URL(self.base_url).host if self.base_url else None

    def thinking_on(self, thinking: Thinking | None, effort: str | None) -> bool:
        """Whether requests made with these settings run the model in thinking mode."""
        if thinking is not None:
            return thinking == "enabled"
        if self.thinking_default == "on":
            return True
        return effort is not None and effort != "none"

    def thinking_fields(self, thinking: Thinking | None, effort: str | None) -> dict[str, object]:
        """The top-level request fields that carry `thinking` and `reasoning_effort`."""
        fields: dict[str, object] = {}
        if thinking is not None and self.thinking_switch == "body":
            fields["thinking"] = {"type": thinking}
        if thinking == "disabled" and self.thinking_switch == "effort":
            fields["reasoning_effort"] = "none"
        if effort is not None:
            fields["reasoning_effort"] = effort
        return fields

    def problems(self, thinking: Thinking | None, effort: str | None) -> list[str]:
        """Why these settings cannot be sent the way this provider documents, if they cannot."""
        problems = []
        if thinking is not None and self.thinking_switch == "none":
            problems.append(
                f"thinking: the {self.name} profile has no documented thinking switch "
                f"({self.label} servers decide by model or reasoning_effort); remove it, or "
                'set profile = "deepseek" or "ollama" if the server is one of those'
            )
        if effort is not None and self.efforts is not None and effort not in self.efforts:
            choices = ", ".join(sorted(self.efforts))
            problems.append(
                f"reasoning_effort: {effort!r} is not one of the values {self.label} "
                f"documents ({choices})"
            )
        if thinking == "disabled" and effort not in (None, "none"):
            problems.append(
                f'reasoning_effort: {effort!r} has no effect with thinking = "disabled"; '
                "remove one of them"
            )
        if thinking == "enabled" and effort == "none":
            problems.append(
                'reasoning_effort: "none" turns thinking off, but thinking = "enabled"; '
                "remove one of them"
            )
        return problems


DEEPSEEK = Profile(
    name="deepseek",
    label="DeepSeek",
    base_url="https://api.deepseek.com",
    model="deepseek-v4-flash",
    reasoning_fields=("reasoning_content",),
    pass_back="reasoning_content",
    thinking_switch="body",
    thinking_default="on",
    # DeepSeek maps these onto low, high and max.
    efforts=frozenset({"minimal", "low", "medium", "high", "xhigh", "max", "ultra"}),
    ignored_when_thinking=("temperature", "top_p"),
    key_variable="DEEPSEEK_API_KEY",
)

OPENAI = Profile(
    name="openai",
    label="OpenAI",
    base_url="https://api.openai.com/v1",
    model="gpt-5-mini",
    reasoning_fields=(),
    pass_back=None,
    thinking_switch="none",
    thinking_default="with_effort",
    efforts=frozenset({"none", "minimal", "low", "medium", "high", "xhigh"}),
    ignored_when_thinking=("temperature", "top_p"),
    key_variable="OPENAI_API_KEY",
)

OLLAMA = Profile(
    name="ollama",
    label="Ollama",
    base_url=f"http://127.0.0.1:{_OLLAMA_PORT}/v1",
    model=None,
    reasoning_fields=("reasoning", "thinking"),
    pass_back=None,
    thinking_switch="effort",
    thinking_default="with_effort",
    efforts=frozenset({"none", "low", "medium", "high"}),
)

GENERIC = Profile(
    name="generic",
    label="OpenAI-compatible",
    base_url=None,
    model=None,
    reasoning_fields=("reasoning_content", "reasoning"),
    pass_back=None,
    thinking_switch="none",
    thinking_default="with_effort",
    efforts=None,
    echo="reasoning_content",
)

PROFILES: Mapping[ProfileName, Profile] = MappingProxyType(
    {profile.name: profile for profile in (DEEPSEEK, OPENAI, OLLAMA, GENERIC)}
)


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine (localhost, 127.0.0.0/8, ::1)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_deepseek_model(model: str) -> bool:
    """Whether `model` names one of DeepSeek's models, as gateways spell them.

    The last path segment (after `/` or `:`) starts with `deepseek`, in any case.
    """
    last = model.strip().replace(":", "/").rstrip("/").rsplit("/", 1)[-1]
    return last.lower().startswith("deepseek")


def detect_profile(base_url: str, model: str | None = None) -> Profile:
    """The profile a server URL implies, else the one `model`'s name implies, else generic.

    The address decides when it is a provider's own host or Ollama's local
    port; otherwise a DeepSeek model name gives `deepseek` (module docstring).
    """
    try:
        url = httpx.URL(base_url.strip())
    except httpx.InvalidURL:
        url = None
    if url is not None:
        for profile in (DEEPSEEK, OPENAI):
            if url.host == profile.host:
                return profile
        if url.port == _OLLAMA_PORT and is_loopback(url.host):
            return OLLAMA
    if model is not None and is_deepseek_model(model):
        return DEEPSEEK
    return GENERIC
