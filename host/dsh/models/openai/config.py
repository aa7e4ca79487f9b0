"""Configuration of the OpenAI-compatible adapter and how it is read from the environment.

Resolution (`resolve_config`), first match wins for each value; empty
environment variables count as unset:

- **base URL**: explicit `base_url` → `DSH_MODEL_BASE_URL` → the default of the
  provider whose key is set (`DEEPSEEK_API_KEY` → https://api.deepseek.com,
  else `OPENAI_API_KEY` → https://api.openai.com/v1).
- **API key**: explicit `api_key` → `DSH_API_KEY` → the provider key that
  belongs to the base URL's host (`DEEPSEEK_API_KEY` only for api.deepseek.com,
  `OPENAI_API_KEY` only for api.openai.com), so a provider's key is never sent
  to another server. A generic key (`DSH_API_KEY`) therefore needs
  `DSH_MODEL_BASE_URL` too.
- **model**: explicit `model` → `DSH_MODEL` → the provider's default
  (`deepseek-chat`, `gpt-4o-mini`).

A loopback server (Ollama, vLLM, llama.cpp on 127.0.0.1/localhost/::1) needs
no key. Every failure is a `ModelConfigError` whose message says exactly which
variables to set. The key is a `SecretStr`: it never appears in a repr.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

__all__ = ["ModelConfigError", "OpenAIConfig", "is_loopback", "resolve_config"]


class ModelConfigError(ValueError):
    """The adapter cannot be configured; the message says what to set."""


@dataclass(frozen=True, slots=True)
class _Provider:
    label: str
    base_url: str
    model: str
    key_variable: str

    @property
    def host(self) -> str:
        return httpx.URL(self.base_url).host


_PROVIDERS = (
    _Provider("DeepSeek", "https://api.deepseek.com", "deepseek-chat", "DEEPSEEK_API_KEY"),
    _Provider("OpenAI", "https://api.openai.com/v1", "gpt-4o-mini", "OPENAI_API_KEY"),
)

HOW_TO_CONFIGURE = """\
Set one of:
  export DEEPSEEK_API_KEY=...   # DeepSeek (https://api.deepseek.com, model deepseek-chat)
  export OPENAI_API_KEY=...     # OpenAI (https://api.openai.com/v1, model gpt-4o-mini)
  export DSH_API_KEY=... DSH_MODEL_BASE_URL=https://host/v1 DSH_MODEL=name   # any other server
A local server needs no key:
  export DSH_MODEL_BASE_URL=http://127.0.0.1:11434/v1 DSH_MODEL=llama3.2   # Ollama
DSH_MODEL_BASE_URL and DSH_MODEL also override a provider's defaults."""


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine (localhost, 127.0.0.0/8, ::1)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAIConfig(BaseModel):
    """Where and how to reach one OpenAI-compatible chat-completions endpoint.

    `base_url` is the API root (requests go to `{base_url}/chat/completions`);
    timeouts are seconds (`read_timeout` bounds the silence between two
    received bytes, so a long streamed reply is fine); `max_retries` counts
    retries after the first attempt.
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    base_url: str
    model: str = Field(min_length=1)
    api_key: SecretStr = SecretStr("")
    connect_timeout: float = Field(default=10.0, gt=0)
    read_timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=10)

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        try:
            url = httpx.URL(value.strip())
        except httpx.InvalidURL as error:
            raise ValueError(f"not a URL: {error}") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError("must be an http:// or https:// URL with a host")
        return str(url).rstrip("/")

    @property
    def loopback(self) -> bool:
        """Whether the server runs on this machine (then no key is needed)."""
        return is_loopback(httpx.URL(self.base_url).host)

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def require_key(self) -> None:
        """Raise `ModelConfigError` if a remote server is configured without a key."""
        if not self.api_key.get_secret_value() and not self.loopback:
            raise ModelConfigError(
                f"no API key for the model server at {self.base_url}.\n{HOW_TO_CONFIGURE}"
            )


def _provider_for(base_url: str) -> _Provider | None:
    try:
        host = httpx.URL(base_url.strip()).host
    except httpx.InvalidURL:
        return None
    return next((p for p in _PROVIDERS if p.host == host), None)


def resolve_config(
    overrides: Mapping[str, Any] | None = None, *, env: Mapping[str, str] | None = None
) -> OpenAIConfig:
    """The configuration from explicit `overrides` (config field names) over `env`.

    `env` defaults to `os.environ`. Raises `ModelConfigError` when no usable
    server, key or model can be determined, or a value is invalid.
    """
    explicit = {key: value for key, value in (overrides or {}).items() if value not in (None, "")}
    environ = os.environ if env is None else env

    def variable(name: str) -> str | None:
        return environ.get(name, "").strip() or None

    base_url = explicit.get("base_url") or variable("DSH_MODEL_BASE_URL")
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
        provider = next((p for p in _PROVIDERS if variable(p.key_variable)), None)
        if provider is None:
            raise ModelConfigError(f"no model server or API key is configured.\n{HOW_TO_CONFIGURE}")
        base_url = provider.base_url
    else:
        provider = _provider_for(str(base_url))
    if api_key is None and provider is not None:
        api_key = variable(provider.key_variable)
    model = explicit.get("model") or variable("DSH_MODEL")
    if model is None and provider is not None:
        model = provider.model
    if not model:
        raise ModelConfigError(
            f"no model name for the server at {base_url}: set DSH_MODEL "
            f"(e.g. export DSH_MODEL=llama3.2 for Ollama).\n{HOW_TO_CONFIGURE}"
        )
    fields = {**explicit, "base_url": base_url, "model": model, "api_key": api_key or ""}
    try:
        config = OpenAIConfig.model_validate(fields)
    except ValidationError as error:
        raise ModelConfigError(f"invalid model configuration: {_describe(error)}") from None
    config.require_key()
    return config


def _describe(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'config'}: {item['msg']}"
        for item in error.errors(include_url=False, include_input=False)
    )
