"""How the `openai` adapter's server, key and model come from explicit config and the env."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from dsh.models.errors import ModelConfigError
from dsh.models.openai import (
    PROFILES,
    OpenAIAdapter,
    OpenAIConfig,
    OpenAISettings,
    detect_profile,
    resolve_config,
)
from dsh.models.openai.config import is_loopback


def key_of(config: OpenAIConfig) -> str:
    return config.api_key.get_secret_value()


def test_a_deepseek_key_alone_selects_deepseek_and_its_default_model() -> None:
    config = resolve_config(env={"DEEPSEEK_API_KEY": "sk-ds"})

    assert config.base_url == "https://api.deepseek.com"
    assert config.endpoint == "https://api.deepseek.com/chat/completions"
    assert config.model == "deepseek-v4-flash"
    assert config.profile == "deepseek"
    assert key_of(config) == "sk-ds"


def test_an_openai_key_alone_selects_openai_and_its_default_model() -> None:
    config = resolve_config(env={"OPENAI_API_KEY": "sk-oa"})

    assert (config.base_url, config.model, key_of(config)) == (
        "https://api.openai.com/v1",
        "gpt-5-mini",
        "sk-oa",
    )
    assert config.profile == "openai"


def test_with_both_provider_keys_deepseek_comes_first() -> None:
    config = resolve_config(env={"OPENAI_API_KEY": "sk-oa", "DEEPSEEK_API_KEY": "sk-ds"})

    assert (config.base_url, key_of(config)) == ("https://api.deepseek.com", "sk-ds")


def test_a_provider_base_url_takes_that_providers_key_and_default_model() -> None:
    env = {
        "DSH_MODEL_BASE_URL": "https://api.openai.com/v1/",
        "OPENAI_API_KEY": "sk-oa",
        "DEEPSEEK_API_KEY": "sk-ds",
    }

    config = resolve_config(env=env)

    assert (config.base_url, config.model, key_of(config)) == (
        "https://api.openai.com/v1",
        "gpt-5-mini",
        "sk-oa",
    )


def test_dsh_model_overrides_the_providers_default_model() -> None:
    config = resolve_config(env={"DEEPSEEK_API_KEY": "sk-ds", "DSH_MODEL": "deepseek-v4-pro"})

    assert config.model == "deepseek-v4-pro"


def test_a_generic_key_with_base_url_and_model_configures_any_server() -> None:
    env = {
        "DSH_API_KEY": "sk-any",
        "DSH_MODEL_BASE_URL": "https://vllm.example.org/v1",
        "DSH_MODEL": "qwen",
        "DEEPSEEK_API_KEY": "sk-ds",
    }

    config = resolve_config(env=env)

    assert (config.base_url, config.model, key_of(config)) == (
        "https://vllm.example.org/v1",
        "qwen",
        "sk-any",
    )


def test_a_provider_key_is_never_sent_to_another_remote_server() -> None:
    env = {
        "DSH_MODEL_BASE_URL": "https://vllm.example.org/v1",
        "DSH_MODEL": "qwen",
        "DEEPSEEK_API_KEY": "sk-ds",
        "OPENAI_API_KEY": "sk-oa",
    }

    with pytest.raises(ModelConfigError) as caught:
        resolve_config(env=env)

    assert str(caught.value).startswith(
        "no API key for the model server at https://vllm.example.org/v1."
    )
    assert "export DSH_API_KEY=..." in str(caught.value)


def test_a_local_server_needs_no_key_and_gets_none() -> None:
    env = {
        "DSH_MODEL_BASE_URL": "http://127.0.0.1:11434/v1",
        "DSH_MODEL": "llama3.2",
        "OPENAI_API_KEY": "sk-oa",
    }

    config = resolve_config(env=env)

    assert (config.base_url, config.model, key_of(config)) == (
        "http://127.0.0.1:11434/v1",
        "llama3.2",
        "",
    )
    assert config.loopback


def test_a_local_server_without_a_model_name_asks_for_dsh_model() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_config(env={"DSH_MODEL_BASE_URL": "http://localhost:11434/v1"})

    assert str(caught.value).startswith(
        "no model name for the server at http://localhost:11434/v1: set DSH_MODEL "
        "(e.g. export DSH_MODEL=llama3.2 for Ollama)."
    )


def test_no_configuration_at_all_says_exactly_what_to_set() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_config(env={"DSH_API_KEY": "  ", "DEEPSEEK_API_KEY": ""})

    message = str(caught.value)
    assert message.startswith("no model server or API key is configured.")
    for line in (
        "export DEEPSEEK_API_KEY=...",
        "export OPENAI_API_KEY=...",
        "export DSH_API_KEY=... DSH_MODEL_BASE_URL=https://host/v1 DSH_MODEL=name",
        "export DSH_MODEL_BASE_URL=http://127.0.0.1:11434/v1 DSH_MODEL=llama3.2",
    ):
        assert line in message


def test_a_generic_key_without_a_server_asks_for_the_base_url_instead_of_guessing() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_config(env={"DSH_API_KEY": "sk-any"})

    assert str(caught.value).startswith(
        "DSH_API_KEY (or an explicit api_key) is set but no server is: also set DSH_MODEL_BASE_URL"
    )
    assert "sk-any" not in str(caught.value)


def test_explicit_settings_override_the_environment() -> None:
    env = {
        "DSH_MODEL_BASE_URL": "https://api.openai.com/v1",
        "DSH_MODEL": "gpt-4o",
        "DSH_API_KEY": "sk-env",
    }
    overrides = {
        "base_url": "https://api.deepseek.com",
        "model": "deepseek-v4-pro",
        "api_key": SecretStr("sk-explicit"),
        "read_timeout": 30,
        "max_retries": 1,
        "connect_timeout": None,
    }

    config = resolve_config(overrides, env=env)

    assert (config.base_url, config.model, key_of(config)) == (
        "https://api.deepseek.com",
        "deepseek-v4-pro",
        "sk-explicit",
    )
    assert (config.read_timeout, config.connect_timeout, config.max_retries) == (30.0, 10.0, 1)


def test_an_explicit_base_url_uses_the_matching_provider_key_from_the_environment() -> None:
    config = resolve_config(
        {"base_url": "https://api.deepseek.com/"}, env={"DEEPSEEK_API_KEY": "k"}
    )

    assert (config.model, key_of(config)) == ("deepseek-v4-flash", "k")


def test_resolution_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DSH_MODEL_BASE_URL", "DSH_MODEL", "DSH_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environ")

    assert key_of(resolve_config()) == "sk-from-environ"


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"base_url": "ftp://files.example.org"}, "base_url: must be an http"),
        ({"base_url": "http://[::1"}, "base_url: not a URL: Invalid port"),
        ({"max_retries": -1}, "max_retries: Input should be greater than or equal to 0"),
        ({"read_timeout": "soon"}, "read_timeout: Input should be a valid number"),
        ({"presence_penalty": 0.2}, "presence_penalty: Extra inputs are not permitted"),
        ({"temperature": 3}, "temperature: Input should be less than or equal to 2"),
        (
            {"api_key": 12345, "base_url": "https://api.deepseek.com"},
            "api_key: Input should be a valid string",
        ),
    ],
)
def test_invalid_settings_are_a_config_error_naming_the_field(
    overrides: dict[str, object], expected: str
) -> None:
    env = {"DEEPSEEK_API_KEY": "sk-secret-value", "DSH_MODEL": "m"}

    with pytest.raises(ModelConfigError) as caught:
        resolve_config(overrides, env=env)

    assert str(caught.value).startswith(f"invalid model configuration: {expected}")
    assert "sk-secret-value" not in str(caught.value)


def test_the_key_is_masked_in_the_config_repr() -> None:
    config = OpenAIConfig(
        base_url="https://api.deepseek.com", model="m", api_key=SecretStr("sk-very-secret")
    )

    assert "sk-very-secret" not in repr(config)
    assert "sk-very-secret" not in str(config)


def test_an_adapter_for_a_remote_server_without_a_key_cannot_be_built() -> None:
    config = OpenAIConfig(base_url="https://api.deepseek.com", model="deepseek-v4-flash")

    with pytest.raises(ModelConfigError, match="no API key for the model server"):
        OpenAIAdapter(config)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("localhost", True),
        ("LOCALHOST.", True),
        ("ollama.localhost", True),
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("api.deepseek.com", False),
        ("localhost.example.org", False),
    ],
)
def test_loopback_hosts_are_recognised(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# -- profiles, thinking and effort --------------------------------------------------


@pytest.mark.parametrize(
    ("base_url", "profile"),
    [
        ("https://api.deepseek.com", "deepseek"),
        ("https://api.openai.com/v1", "openai"),
        ("http://127.0.0.1:11434/v1", "ollama"),
        ("http://localhost:11434/v1", "ollama"),
        ("http://127.0.0.1:8000/v1", "generic"),
        ("https://ollama.example.org:11434/v1", "generic"),
        ("https://proxy.example.org/deepseek", "generic"),
    ],
)
def test_the_profile_follows_the_server_unless_named(base_url: str, profile: str) -> None:
    env = {"DSH_MODEL_BASE_URL": base_url, "DSH_MODEL": "m", "DSH_API_KEY": "k"}

    assert resolve_config(env=env).profile == profile
    assert detect_profile(base_url).name == profile


@pytest.mark.parametrize(
    ("base_url", "model", "profile"),
    [
        ("https://gateway.example.org/v1", "deepseek-v4-pro", "deepseek"),
        ("https://openrouter.example.org/api/v1", "deepseek/deepseek-v4-pro", "deepseek"),
        ("https://together.example.org/v1", "deepseek-ai/DeepSeek-V4", "deepseek"),
        ("https://fireworks.example.org/v1", "accounts/f/models/deepseek-v4", "deepseek"),
        ("https://gateway.example.org/v1", "house-reasoner", "generic"),
        ("https://gateway.example.org/v1", "not-deepseek", "generic"),
        # The address decides first: a DeepSeek model on Ollama is Ollama's, and
        # any model on api.openai.com is OpenAI's.
        ("http://127.0.0.1:11434/v1", "deepseek-r1:8b", "ollama"),
        ("https://api.openai.com/v1", "deepseek-v4-pro", "openai"),
    ],
)
def test_a_deepseek_model_behind_another_address_gets_the_deepseek_profile(
    base_url: str, model: str, profile: str
) -> None:
    env = {"DSH_MODEL_BASE_URL": base_url, "DSH_MODEL": model, "DSH_API_KEY": "k"}

    assert resolve_config(env=env).profile == profile
    assert OpenAIConfig(base_url=base_url, model=model).profile == profile
    assert detect_profile(base_url, model).name == profile


def test_a_named_profile_wins_over_the_models_name() -> None:
    env = {
        "DSH_MODEL_BASE_URL": "https://gateway.example.org/v1",
        "DSH_MODEL": "deepseek-v4-pro",
        "DSH_MODEL_PROFILE": "generic",
        "DSH_API_KEY": "k",
    }

    assert resolve_config(env=env).profile == "generic"


def test_a_named_profile_wins_and_keeps_provider_keys_on_their_own_host() -> None:
    env = {
        "DSH_MODEL_BASE_URL": "https://proxy.example.org/v1",
        "DSH_MODEL_PROFILE": "deepseek",
        "DSH_API_KEY": "sk-proxy",
        "DEEPSEEK_API_KEY": "sk-ds",
    }

    config = resolve_config(env=env)

    assert (config.profile, config.model, key_of(config)) == (
        "deepseek",
        "deepseek-v4-flash",
        "sk-proxy",
    )


def test_a_named_profile_supplies_its_own_server() -> None:
    config = resolve_config({"profile": "ollama"}, env={"DSH_MODEL": "qwen3"})

    assert (config.base_url, config.profile, key_of(config)) == (
        "http://127.0.0.1:11434/v1",
        "ollama",
        "",
    )


def test_an_unknown_profile_lists_the_choices() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_config(env={"DSH_MODEL_PROFILE": "anthropic", "DEEPSEEK_API_KEY": "k"})

    assert str(caught.value) == (
        "invalid model configuration: profile: unknown profile 'anthropic'; "
        "choose one of: deepseek, openai, ollama, generic"
    )


def test_validated_overlay_settings_configure_thinking_and_sampling() -> None:
    settings = OpenAISettings(thinking="enabled", reasoning_effort="max", temperature=0.5)

    config = resolve_config(settings, env={"DEEPSEEK_API_KEY": "k"})

    assert (config.thinking, config.reasoning_effort, config.temperature) == ("enabled", "max", 0.5)
    assert config.thinking_on
    assert (config.connect_timeout, config.read_timeout, config.max_retries) == (10.0, 120.0, 3)


@pytest.mark.parametrize(
    ("env", "settings", "problem"),
    [
        (
            {"OPENAI_API_KEY": "k"},
            {"thinking": "enabled"},
            "thinking: the openai profile has no documented thinking switch",
        ),
        (
            {"DSH_MODEL_BASE_URL": "http://127.0.0.1:8000/v1", "DSH_MODEL": "m"},
            {"thinking": "disabled"},
            "thinking: the generic profile has no documented thinking switch",
        ),
        (
            {"DEEPSEEK_API_KEY": "k"},
            {"reasoning_effort": "extreme"},
            "reasoning_effort: 'extreme' is not one of the values DeepSeek documents "
            "(high, low, max, medium, minimal, ultra, xhigh)",
        ),
        (
            {"DEEPSEEK_API_KEY": "k"},
            {"thinking": "disabled", "reasoning_effort": "high"},
            "reasoning_effort: 'high' has no effect with thinking = \"disabled\"",
        ),
        (
            {"DSH_MODEL_BASE_URL": "http://127.0.0.1:11434/v1", "DSH_MODEL": "m"},
            {"thinking": "enabled", "reasoning_effort": "none"},
            'reasoning_effort: "none" turns thinking off, but thinking = "enabled"',
        ),
    ],
)
def test_thinking_settings_a_provider_cannot_take_are_a_config_error(
    env: dict[str, str], settings: dict[str, str], problem: str
) -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_config(OpenAISettings.model_validate(settings), env=env)

    assert str(caught.value).startswith(f"invalid model configuration: {problem}")


def test_the_generic_profile_passes_any_effort_on() -> None:
    env = {"DSH_MODEL_BASE_URL": "http://127.0.0.1:8000/v1", "DSH_MODEL": "m"}

    assert (
        resolve_config({"reasoning_effort": "very-high"}, env=env).reasoning_effort == "very-high"
    )


def test_the_profiles_are_declared_once_and_cannot_be_changed() -> None:
    assert list(PROFILES) == ["deepseek", "openai", "ollama", "generic"]
    assert PROFILES["deepseek"].pass_back == "reasoning_content"
    assert [p.name for p in PROFILES.values() if p.pass_back] == ["deepseek"]
    assert [(p.name, p.echo) for p in PROFILES.values() if p.echo] == [
        ("generic", "reasoning_content")
    ]
    with pytest.raises(TypeError):
        PROFILES["x"] = PROFILES["generic"]  # type: ignore[index]


def test_a_config_without_a_string_base_url_is_refused_before_any_profile_is_guessed() -> None:
    with pytest.raises(ValidationError, match=r"base_url\s+Input should be a valid string"):
        OpenAIConfig.model_validate({"base_url": 8080, "model": "m"})
