"""`ActionArguments.parse`: an action's JSON arguments, strictly, or a 422 naming each problem."""

from __future__ import annotations

import pytest
from pydantic import Field

from dsh.plugins.actions import ActionArguments
from dsh.plugins.errors import ActionError


class Snooze(ActionArguments):
    id: str
    seconds: int = Field(default=600, ge=60)


def test_valid_arguments_parse_with_defaults() -> None:
    assert Snooze.parse({"id": "rem-1"}) == Snooze(id="rem-1", seconds=600)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "id: Field required"),
        ({"id": "rem-1", "seconds": 5}, "seconds: Input should be greater than or equal to 60"),
        ({"id": "rem-1", "seconds": "600"}, "seconds: Input should be a valid integer"),
        ({"id": "rem-1", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ([], "args: Input should be an object"),
    ],
)
def test_bad_arguments_are_a_422_naming_each_problem(args: object, message: str) -> None:
    with pytest.raises(ActionError) as caught:
        Snooze.parse(args)  # type: ignore[arg-type]

    assert (caught.value.status, caught.value.code) == (422, "invalid_arguments")
    assert caught.value.message.startswith(message)


def test_arguments_that_are_not_json_are_refused() -> None:
    with pytest.raises(ActionError, match="args are not JSON"):
        Snooze.parse({"id": float("nan")})
