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
    ScriptError,
    resolve_model,
)
from dsh.models.registry import no_argument


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
