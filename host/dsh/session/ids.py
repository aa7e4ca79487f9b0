"""Session ids: what one may look like, checked before an id can reach a file name.

`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$` (docs/DESIGN.md §2, public); anything else
raises `InvalidSessionId`.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from .errors import InvalidSessionId

__all__ = ["SESSION_ID_PATTERN", "SessionId", "validate_session_id"]

SESSION_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def validate_session_id(value: str) -> str:
    """Return `value` unchanged if it is a valid Session id, else raise `InvalidSessionId`.

    Every path that turns an id into a file name calls this first.
    """
    if not isinstance(value, str) or SESSION_ID_PATTERN.fullmatch(value) is None:
        raise InvalidSessionId(value)
    return value


#: A Session id in a pydantic model, validated like every other.
SessionId = Annotated[str, AfterValidator(validate_session_id)]
