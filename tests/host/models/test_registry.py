from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh.models import (
    MODEL_CHOICES,
    AbsentModel,
    DemoModel,
    ModelChoice,
    ScriptedModel,
    resolve_model,
)
from dsh.models.errors import ModelSettingsError, ScriptError
from dsh.models.registry import check_host, check_model, no_argument, validate_settings


def test_demo_and_absent_resolve_to_their_adapters() -> None:
    assert isinstance(resolve_model("demo"), DemoModel)
    assert isinstance(resolve_model(" absent "), AbsentModel)


def test_scripted_resolves_with_the_script_loaded(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "hi"}]), "utf-8")

    model = resolve_model(f"scripted:{script}")

    assert isinstance(model, ScriptedModel)
    assert model.remaining == 1


def test_an_unknown_model_lists_the_valid_choices() -> None:
    with pytest.raises(ValueError) as caught:
        resolve_model("gpt")

    message = str(caught.value)
    assert message.startswith("unknown model 'gpt'; choose one of: demo, absent, scripted:PATH")
    assert message.endswith(", ".join(choice.usage for choice in MODEL_CHOICES.values()))


@pytest.mark.parametrize("spec", ["scripted", "scripted:"])
def test_scripted_without_a_path_says_how_to_give_one(spec: str) -> None:
    with pytest.raises(ValueError, match="needs a script file: --model scripted:PATH"):
        resolve_model(spec)


@pytest.mark.parametrize("spec", ["demo:x", "absent:"])
def test_a_choice_without_arguments_refuses_one(spec: str) -> None:
    with pytest.raises(ValueError, match="takes no argument"):
        resolve_model(spec)


def test_a_bad_script_surfaces_as_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ScriptError):
        resolve_model(f"scripted:{tmp_path / 'missing.json'}")


def test_adding_a_choice_is_one_entry() -> None:
    choices = {**MODEL_CHOICES, "quiet": ModelChoice("quiet", no_argument("quiet", AbsentModel))}

    assert isinstance(resolve_model("quiet", choices), AbsentModel)
    with pytest.raises(ValueError, match=r"scripted:PATH, (.+, )?quiet$"):
        resolve_model("loud", choices)


def test_the_default_choices_cannot_be_mutated() -> None:
    with pytest.raises(TypeError):
        MODEL_CHOICES["x"] = MODEL_CHOICES["demo"]  # type: ignore[index]


# -- names and settings tables ---------------------------------------------------


def test_check_model_accepts_known_names_with_any_argument_and_refuses_others() -> None:
    assert check_model("scripted:whatever.json") == "scripted:whatever.json"
    with pytest.raises(ValueError, match=r"^unknown model 'Demo'; choose one of: demo, "):
        check_model("Demo")


def test_a_settings_table_is_validated_by_its_adapters_own_settings_model() -> None:
    from dsh.models.openai import OpenAISettings

    validated = validate_settings(
        {"openai": {"model": "deepseek-v4-pro", "thinking": "enabled", "read_timeout": 30}}
    )

    assert validated == {
        "openai": OpenAISettings(model="deepseek-v4-pro", thinking="enabled", read_timeout=30)
    }


def test_every_problem_of_every_table_is_reported_under_its_key_path() -> None:
    tables = {
        "openai": {"read_timout": 30, "thinking": "sometimes", "max_retries": "3"},
        "demo": {"voice": "calm"},
        "gpt": {},
    }

    with pytest.raises(ModelSettingsError) as caught:
        validate_settings(tables, source=Path("o/overlay.toml"))

    assert str(caught.value).splitlines() == [
        "o/overlay.toml: host.openai.max_retries: Input should be a valid integer",
        "o/overlay.toml: host.openai.thinking: Input should be 'enabled' or 'disabled'",
        "o/overlay.toml: host.openai.read_timout: Extra inputs are not permitted",
        "o/overlay.toml: host.demo: model 'demo' takes no settings (got host.demo.voice)",
        "o/overlay.toml: host.gpt: no model adapter is named 'gpt' "
        "(adapters: demo, absent, scripted, openai)",
    ]
    assert isinstance(caught.value, ValueError)


def test_an_api_key_in_a_settings_table_is_refused_saying_where_keys_belong() -> None:
    with pytest.raises(ModelSettingsError) as caught:
        validate_settings({"openai": {"api_key": "sk-secret"}})

    message = str(caught.value)
    assert message.startswith("host.openai: api_key: API keys are read only from the environment")
    assert "DSH_API_KEY" in message
    assert "sk-secret" not in message


def test_check_host_reports_a_bad_model_name_and_bad_tables_together() -> None:
    with pytest.raises(ModelSettingsError) as caught:
        check_host("gpt", {"absent": {}}, source=Path("o/overlay.toml"))

    assert [path for path, _ in caught.value.problems] == ["host.model", "host.absent"]
    assert str(caught.value).startswith("o/overlay.toml: host.model: unknown model 'gpt'")
    assert "host.absent: model 'absent' takes no settings (got an empty table)" in str(caught.value)
    check_host("demo", None)
    check_host(None, {"openai": {"model": "m"}})


def test_resolving_one_model_still_validates_every_table() -> None:
    with pytest.raises(ModelSettingsError, match=r"^o\.toml: host\.openai\.base_url: "):
        resolve_model(
            "demo",
            settings={"openai": {"base_url": "ftp://nowhere"}},
            source=Path("o.toml"),
        )
