"""Arguments of a person's action (`dsh_session_action`), parsed like tool arguments.

    class Snooze(dsh.ActionArguments):
        id: str
        seconds: int = Field(ge=60)

    args = Snooze.parse(raw)   # ActionError 422 "invalid_arguments" naming each problem

An action's `args` arrive as JSON from the web client (`POST
/api/sessions/{id}/actions`); `parse` validates them in JSON mode, strictly
(unknown fields are errors), and turns a `ValidationError` into the
`ActionError` the host answers 422 with, worded by `dsh.describe`.
"""

from __future__ import annotations

import json
from typing import Self

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from ..base.validation import describe
from .errors import ActionError

__all__ = ["ActionArguments"]


class ActionArguments(BaseModel):
    """Base for action argument models: strict, no extra fields, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    @classmethod
    def parse(cls, args: JsonValue) -> Self:
        """`args` validated by this model; `ActionError.invalid` (422) naming every problem."""
        try:
            return cls.model_validate_json(json.dumps(args, allow_nan=False))
        except ValidationError as error:
            raise ActionError.invalid(describe(error, root="args")) from None
        except (TypeError, ValueError) as error:
            raise ActionError.invalid(f"args are not JSON: {error}") from None
