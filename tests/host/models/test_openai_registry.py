"""The `openai` entry of the `--model` registry."""

from __future__ import annotations

import pytest

from dsh.models import resolve_model
from dsh.models.errors import ModelConfigError
from dsh.models.openai import OpenAIAdapter

pytestmark = pytest.mark.anyio

VARIABLES = (
    "DSH_MODEL_BASE_URL",
    "DSH_MODEL",
    "DSH_MODEL_PROFILE",
    "DSH_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENAI_API_KEY",
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


async def test_model_openai_builds_the_adapter_from_the_environment(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("DEEPSEEK_API_KEY", "sk-ds")

    model = resolve_model("openai")

    assert isinstance(model, OpenAIAdapter)
    assert (model.config.base_url, model.config.model) == (
        "https://api.deepseek.com",
        "deepseek-v4-flash",
    )
    await model.aclose()


def test_model_openai_without_configuration_is_a_value_error_saying_what_to_set(
    clean_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ModelConfigError, match="export DEEPSEEK_API_KEY=") as caught:
        resolve_model("openai")

    assert isinstance(caught.value, ValueError)


def test_model_openai_takes_no_argument() -> None:
    with pytest.raises(ValueError, match="takes no argument"):
        resolve_model("openai:gpt-4o")


def test_overlay_settings_configure_the_openai_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "DSH_MODEL_BASE_URL",
        "DSH_MODEL",
        "DSH_API_KEY",
        "DEEPSEEK_API_KEY",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)

    adapter = resolve_model(
        "openai",
        settings={"openai": {"base_url": "http://127.0.0.1:11434/v1", "model": "llama3.2"}},
    )

    assert isinstance(adapter, OpenAIAdapter)
    assert adapter.config.base_url == "http://127.0.0.1:11434/v1"
    assert adapter.config.model == "llama3.2"


def test_models_without_settings_refuse_them() -> None:
    with pytest.raises(ValueError, match="takes no settings"):
        resolve_model("demo", settings={"demo": {"x": 1}})
