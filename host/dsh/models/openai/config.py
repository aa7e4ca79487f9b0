"""Settings of the OpenAI-compatible adapter, and how they are read from the environment.

`OpenAISettings` is the overlay's `[host.openai]` table, declared here once
(the model registry validates the table with it). `OpenAIConfig` is the
resolved configuration the adapter runs with; both share the tuning fields
(`_Tuning`).

Resolution (`resolve_config`), first match wins for each value; empty
environment variables count as unset:

- **profile** (see `profiles`): explicit `profile` → `DSH_MODEL_PROFILE` →
  the profile the base URL implies (api.deepseek.com → `deepseek`,
  api.openai.com → `openai`, a loopback server on port 11434 → `ollama`)
  → the profile the model's name implies (a DeepSeek model → `deepseek`,
  e.g. `DSH_MODEL=deepseek-v4-pro` behind a gateway) → `generic`.
- **base URL**: explicit `base_url` → `DSH_MODEL_BASE_URL` → the named
  profile's server → the server of the provider whose key is set
  (`DEEPSEEK_API_KEY` → https://api.deepseek.com, else `OPENAI_API_KEY` →
  https://api.openai.com/v1).
- **API key**: explicit `api_key` (programmatic only: an overlay cannot hold
  one) → `DSH_API_KEY` → the provider key that belongs to the base URL's host
  (`DEEPSEEK_API_KEY` only for api.deepseek.com, `OPENAI_API_KEY` only for
  api.openai.com), so a provider's key is never sent to another server. A
  generic key (`DSH_API_KEY`) therefore needs `DSH_MODEL_BASE_URL` too.
- **model**: explicit `model` → `DSH_MODEL` → the profile's default
  (`deepseek-v4-flash`, `gpt-5-mini`).

A loopback server (Ollama, vLLM, llama.cpp on 127.0.0.1/localhost/::1) needs
no key. Every failure is a `ModelConfigError` whose message says exactly which
variables to set. The key is a `SecretStr`: it never appears in a repr.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Any, Self

import httpx
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ...base.validation import describe
from ..errors import ModelConfigError
from .profiles import PROFILES, Profile, ProfileName, Thinking, detect_profile, is_loopback

__all__ = [
    "HOW_TO_CONFIGURE",
    "OpenAIConfig",
    "OpenAISettings",
    "is_loopback",
    "resolve_config",
]

_KEY_VARIABLES = "DSH_API_KEY, DEEPSEEK_API_KEY or OPENAI_API_KEY"


HOW_TO_CONFIGURE = """\
Set one of:
  export DEEPSEEK_API_KEY=...   # DeepSeek (https://api.deepseek.com, model deepseek-v4-flash)
  export OPENAI_API_KEY=...     # OpenAI (https://api.openai.com/v1, model gpt-5-mini)
  export DSH_API_KEY=... DSH_MODEL_BASE_URL=https://host/v1 DSH_MODEL=name   # any other server
A local server needs no key:
  export DSH_MODEL_BASE_URL=http://127.0.0.1:11434/v1 DSH_MODEL=llama3.2   # Ollama
DSH_MODEL_BASE_URL, DSH_MODEL and DSH_MODEL_PROFILE also override a provider's defaults."""


def _http_url(value: str) -> str:
    try:
        url = httpx.URL(value.strip())
    except httpx.InvalidURL as error:
        raise ValueError(f"not a URL: {error}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must be an http:// or https:// URL with a host")
    return str(url).rstrip("/")


HttpUrl = Annotated[str, AfterValidator(_http_url)]
_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Tuning(BaseModel):
    """How requests are made: timeouts (seconds), retries, thinking and sampling.

    `read_timeout` bounds the silence between two received bytes, so a long
    streamed reply is fine; `max_retries` counts retries after the first
    attempt. `thinking` and `reasoning_effort` are sent the way the profile
    documents; `temperature` and `top_p` are not sent while the model thinks.
    """

    model_config = _STRICT

    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    thinking: Thinking | None = None
    reasoning_effort: str | None = Field(default=None, min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)


class OpenAISettings(_Tuning):
    """The overlay's `[host.openai]` table: every field optional, never a key.

    What the table leaves out comes from the environment (`resolve_config`).
    """

    base_url: HttpUrl | None = None
    model: str | None = Field(default=None, min_length=1)
    profile: ProfileName | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_keys(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and "api_key" in data:
            raise PydanticCustomError(
                "no_keys_here",
                "api_key: API keys are read only from the environment ({variables}), "
                "never from an overlay",
                {"variables": _KEY_VARIABLES},
            )
        return data


class OpenAIConfig(_Tuning):
    """Where and how to reach one OpenAI-compatible chat-completions endpoint.

    `base_url` is the API root (requests go to `{base_url}/chat/completions`);
    `profile` defaults to the one the base URL, else the model's name, implies.
    The thinking settings must be ones the profile can send (else a
    `ValidationError` says why).
    """

    base_url: HttpUrl
    model: str = Field(min_length=1)
    api_key: SecretStr = SecretStr("")
    profile: ProfileName = "generic"

    @model_validator(mode="before")
    @classmethod
    def _default_profile(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("profile") is None:
            base_url, model = data.get("base_url"), data.get("model")
            if isinstance(base_url, str):
                named = model if isinstance(model, str) else None
                return {**data, "profile": detect_profile(base_url, named).name}
        return data

    @model_validator(mode="after")
    def _sendable(self) -> Self:
        problems = self.provider.problems(self.thinking, self.reasoning_effort)
        if problems:
            raise PydanticCustomError("unsupported_setting", "; ".join(problems))
        return self

    @property
    def provider(self) -> Profile:
        """The profile requests are built for."""
        return PROFILES[self.profile]

    @property
    def loopback(self) -> bool:
        """Whether the server runs on this machine (then no key is needed)."""
        return is_loopback(httpx.URL(self.base_url).host)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def thinking_on(self) -> bool:
        """Whether the model is asked to think (so sampling parameters are not sent)."""
        return self.provider.thinking_on(self.thinking, self.reasoning_effort)

    def require_key(self) -> None:
        """Raise `ModelConfigError` if a remote server is configured without a key."""
        if not self.api_key.get_secret_value() and not self.loopback:
            raise ModelConfigError(
                f"no API key for the model server at {self.base_url}.\n{HOW_TO_CONFIGURE}"
            )


def _host_of(base_url: str) -> str | None:
    try:
        return httpx.URL(base_url.strip()).host
    except httpx.InvalidURL:
        return None


def _key_owner(base_url: str) -> Profile | None:
    """The provider whose own key may be sent to `base_url` (its host only)."""
    host = _host_of(base_url)
    return next((p for p in PROFILES.values() if p.key_variable and host and p.host == host), None)


def _explicit(overrides: OpenAISettings | Mapping[str, Any] | None) -> dict[str, Any]:
    if isinstance(overrides, OpenAISettings):
        return overrides.model_dump(exclude_unset=True, exclude_none=True)
    return {key: value for key, value in (overrides or {}).items() if value not in (None, "")}


def _named_profile(name: object) -> Profile | None:
    if name is None:
        return None
    profile = next((p for p in PROFILES.values() if p.name == name), None)
    if profile is None:
        choices = ", ".join(PROFILES)
        raise ModelConfigError(
            f"invalid model configuration: profile: unknown profile {name!r}; "
            f"choose one of: {choices}"
        )
    return profile


def resolve_config(
    overrides: OpenAISettings | Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
) -> OpenAIConfig:
    """The configuration from explicit `overrides` over `env`.

    `overrides` is a validated `[host.openai]` table, or a mapping of config
    field names (which may include `api_key`). `env` defaults to `os.environ`.
    Raises `ModelConfigError` when no usable server, key or model can be
    determined, or a value is invalid.
    """
    explicit = _explicit(overrides)
    environ = os.environ if env is None else env

    def variable(name: str) -> str | None:
        return environ.get(name, "").strip() or None

    named = _named_profile(explicit.get("profile") or variable("DSH_MODEL_PROFILE"))
    base_url = (
        explicit.get("base_url")
        or variable("DSH_MODEL_BASE_URL")
        or (named.base_url if named else None)
    )
    given_key = explicit.get("api_key")
    if isinstance(given_key, SecretStr):
        given_key = given_key.get_secret_value() or None
    api_key = given_key or variable("DSH_API_KEY")
    if base_url is None:
        if api_key is not None:
            raise ModelConfigError(
                "DSH_API_KEY (or an explicit api_key) is set but no server is: also set "
                "DSH_MODEL_BASE_URL (e.g. https://api.deepseek.com or https://api.openai.com/v1)"
                f" and DSH_MODEL.\n{HOW_TO_CONFIGURE}"
            )
        keyed = next(
            (p for p in PROFILES.values() if p.key_variable and variable(p.key_variable)), None
        )
        if keyed is None or keyed.base_url is None:
            raise ModelConfigError(f"no model server or API key is configured.\n{HOW_TO_CONFIGURE}")
        base_url = keyed.base_url
    base_url = str(base_url)
    owner = _key_owner(base_url)
    if api_key is None and owner is not None and owner.key_variable is not None:
        api_key = variable(owner.key_variable)
    model = explicit.get("model") or variable("DSH_MODEL")
    profile = named or detect_profile(base_url, model)
    model = model or profile.model
    if not model:
        raise ModelConfigError(
            f"no model name for the server at {base_url}: set DSH_MODEL "
            f"(e.g. export DSH_MODEL=llama3.2 for Ollama).\n{HOW_TO_CONFIGURE}"
        )
    fields = {
        **explicit,
        "base_url": base_url,
        "model": model,
        "api_key": api_key or "",
        "profile": profile.name,
    }
    try:
        config = OpenAIConfig.model_validate(fields)
    except ValidationError as error:
        raise ModelConfigError(f"invalid model configuration: {describe(error)}") from None
    config.require_key()
    return config
