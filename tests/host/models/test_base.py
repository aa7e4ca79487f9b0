from __future__ import annotations

from dsh.models import AbsentModel, ModelReply, ScriptedModel
from dsh.models.base import describe_model
from dsh.models.demo import DemoModel


class Plain:
    """An adapter a plugin might offer, with no `description`."""

    name = "plain"

    async def complete(self, request: object, on_delta: object = None) -> ModelReply:
        return ModelReply(text="")


def test_each_built_in_adapter_describes_itself_for_the_start_up_log() -> None:
    assert describe_model(DemoModel()) == "demo (offline)"
    assert describe_model(AbsentModel()) == "absent (no model: every turn ends saying so)"
    scripted = ScriptedModel([], source="/tmp/answers.json")
    assert describe_model(scripted) == "scripted /tmp/answers.json"


def test_an_adapter_without_a_description_is_named_by_its_name() -> None:
    assert describe_model(Plain()) == "plain"  # type: ignore[arg-type]
    empty = Plain()
    empty.description = ""  # type: ignore[attr-defined]
    assert describe_model(empty) == "plain"  # type: ignore[arg-type]
