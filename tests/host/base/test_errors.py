"""The coded-error base and the one error collector."""

from __future__ import annotations

import pytest

from dsh.agents.errors import ToolError
from dsh.base.errors import CodedError, raise_errors
from dsh.models.errors import ModelError
from dsh.plugins.errors import ActionError
from dsh.web.errors import ApiError


def test_a_coded_error_has_a_code_a_message_a_status_and_a_dict() -> None:
    error = CodedError("disk_full", "the disk is full")

    assert (error.code, error.message, error.status) == ("disk_full", "the disk is full", 500)
    assert str(error) == "disk_full: the disk is full"
    assert error.to_dict() == {"code": "disk_full", "message": "the disk is full"}


def test_each_kind_has_its_own_default_status_and_one_may_say_otherwise() -> None:
    assert ToolError("invalid_rule", "x").status == 422
    assert ToolError("schedule_conflict", "x", status=409).status == 409
    assert ModelError("model_unavailable", "x").status == 502
    assert ApiError(418, "teapot", "short and stout").status == 418
    for error in (ToolError("a", "b"), ModelError("a", "b"), ApiError(400, "a", "b")):
        assert isinstance(error, CodedError)
        assert error.to_dict() == {"code": "a", "message": "b"}


def test_action_errors_name_the_usual_statuses() -> None:
    assert ActionError.not_found("no action 'x'").to_dict() == {
        "code": "unknown_action",
        "message": "no action 'x'",
    }
    assert ActionError.not_found("x").status == 404
    assert (ActionError.invalid("bad").code, ActionError.invalid("bad").status) == (
        "invalid_arguments",
        422,
    )
    assert (ActionError.conflict("gone", "gone").code, ActionError.conflict("x").status) == (
        "gone",
        409,
    )
    assert ActionError("refused", "no").status == 400


@pytest.mark.parametrize(("code", "message"), [("", "m"), (3, "m"), ("c", None)])
def test_a_coded_error_refuses_a_code_or_message_that_is_not_text(
    code: object, message: object
) -> None:
    with pytest.raises(TypeError):
        CodedError(code, message)  # type: ignore[arg-type]


def test_no_errors_raise_nothing_one_raises_itself_several_a_group() -> None:
    raise_errors([], "nothing")
    first = ValueError("one")
    with pytest.raises(ValueError) as caught:
        raise_errors([first], "one")
    assert caught.value is first
    second = OSError("two")
    with pytest.raises(ExceptionGroup) as group:
        raise_errors([first, second], "2 things failed")
    assert group.value.message == "2 things failed"
    assert list(group.value.exceptions) == [first, second]
