from __future__ import annotations

import anyio
import pytest

from dsh.models import AbsentModel, ModelAdapter, ModelRequest
from dsh.models.errors import ModelError

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(messages=(), tools=())


async def test_every_call_fails_with_model_unavailable_saying_how_to_pick_a_model() -> None:
    model = AbsentModel()

    for _ in range(2):
        with pytest.raises(ModelError) as caught:
            await model.complete(REQUEST)
        assert caught.value.code == "model_unavailable"
        assert "no model is configured" in caught.value.message
        assert "--model demo|openai|scripted:PATH" in caught.value.message


async def test_a_custom_reason_replaces_the_message() -> None:
    with pytest.raises(ModelError, match="model_unavailable: the key was rejected"):
        await AbsentModel("the key was rejected").complete(REQUEST, on_delta=print)


async def test_the_call_is_cancellable_before_it_fails() -> None:
    with anyio.CancelScope() as scope:
        scope.cancel()
        await AbsentModel().complete(REQUEST)

    assert scope.cancelled_caught


def test_it_is_a_model_adapter_named_absent() -> None:
    model = AbsentModel()

    assert isinstance(model, ModelAdapter)
    assert model.name == "absent"
