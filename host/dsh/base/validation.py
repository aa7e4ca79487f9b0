"""One way to say what a pydantic `ValidationError` found, for people and models.

Every boundary (stored events, tool arguments, HTTP bodies, overlays, plugin
configs, plugin protocols, action arguments) reports validation problems as
`<location>: <message>` pairs joined by `; `. `describe()` is that one
formatter and `problems()` the pairs it joins, so the wording is the same
everywhere: a location is the dotted path of the offending value (or what a
caller's `location` function makes of it, e.g. a TOML key path), a message
is pydantic's, without the `Value error, ` prefix pydantic puts before the
text of a custom validator's `ValueError`.

Both accept a `ValidationError` or the list of error dictionaries that
`ValidationError.errors()` returns (which is what FastAPI hands over).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import ValidationError

__all__ = ["Problem", "describe", "key_path", "problems"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

Location = tuple[int | str, ...]
Errors = ValidationError | Sequence[Mapping[str, Any]]
_CUSTOM_PREFIX = "Value error, "


class Problem(NamedTuple):
    """One problem: where (`loc`, and its text `where`), what (`message`), its pydantic `type`."""

    loc: Location
    where: str
    message: str
    type: str


def problems(
    error: Errors,
    *,
    root: str = "",
    drop_tags: Collection[str] = (),
    location: Callable[[Location], str] | None = None,
) -> list[Problem]:
    """Every problem of `error`, in pydantic's order.

    `root` names the location of a problem at the top level (e.g. "arguments");
    `drop_tags` are the tags of a tagged union, which pydantic prefixes to
    every location although the payload already names its tag; `location`
    turns a location tuple into text (default: dotted, e.g. `inner.count`).
    """
    details = (
        error.errors(include_url=False, include_input=False)
        if isinstance(error, ValidationError)
        else error
    )
    found = []
    for detail in details:
        loc: Location = tuple(detail.get("loc", ()))
        if loc and loc[0] in drop_tags:
            loc = loc[1:]
        where = location(loc) if location is not None else ".".join(str(part) for part in loc)
        message = str(detail.get("msg", "is invalid")).removeprefix(_CUSTOM_PREFIX)
        found.append(Problem(loc, where or root, message, str(detail.get("type", ""))))
    return found


def describe(
    error: Errors,
    *,
    first_only: bool = False,
    root: str = "",
    drop_tags: Collection[str] = (),
    location: Callable[[Location], str] | None = None,
) -> str:
    """`error` as `loc: message; loc: message` (or its first problem, with a count).

    The keyword arguments are those of `problems()`.
    """
    found = problems(error, root=root, drop_tags=drop_tags, location=location)
    shown = found[:1] if first_only else found
    text = "; ".join(
        f"{item.where}: {item.message}" if item.where else item.message for item in shown
    )
    more = len(found) - len(shown)
    return f"{text} (and {more} more)" if more else text


def key_path(parts: tuple[int | str, ...]) -> str:
    """A TOML dotted key for `parts`, quoting parts that are not bare keys.

    pydantic locates a bad dict key as `(..., key, "[key]")`; the key is enough.
    """
    if parts and parts[-1] == "[key]":
        parts = parts[:-1]
    return ".".join(
        str(part) if _BARE_KEY.fullmatch(str(part)) else json.dumps(str(part)) for part in parts
    )
