"""One way to say what a pydantic `ValidationError` found, for people and models.

Every boundary (stored events, tool arguments, HTTP bodies, overlays, plugin
configs, plugin protocols) reports validation problems as
`<location>: <message>` pairs joined by `; `. `describe()` is that one
formatter, so the wording is the same everywhere.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import ValidationError

__all__ = ["describe"]


def describe(
    error: ValidationError,
    *,
    first_only: bool = False,
    root: str = "",
    drop_tags: Collection[str] = (),
) -> str:
    """`error` as `loc: message; loc: message` (or its first problem, with a count).

    `root` names the location of a problem at the top level (e.g. "arguments");
    `drop_tags` are the tags of a tagged union, which pydantic prefixes to
    every location although the payload already names its tag.
    """
    problems = error.errors(include_url=False, include_input=False)
    parts = []
    for problem in problems[:1] if first_only else problems:
        loc = problem["loc"]
        if loc and loc[0] in drop_tags:
            loc = loc[1:]
        where = ".".join(str(part) for part in loc) or root
        parts.append(f"{where}: {problem['msg']}" if where else str(problem["msg"]))
    text = "; ".join(parts)
    more = len(problems) - len(parts)
    return f"{text} (and {more} more)" if more else text
