"""How deep and how large a JSON value the host stores may be (issue 19, DESIGN §2).

Every value that becomes part of a Session's log is bounded *before* it is
appended, so that whatever the host writes it can read back, on every path:

- **Depth** (`MAX_DEPTH` = 64): a value that arrives from outside — a tool
  call's arguments, a tool's result, a plugin's event data, an action's
  arguments, an HTTP body — may nest at most 64 containers (`[[1]]` is 2
  deep, a scalar 0). Real arguments and results nest a handful of levels;
  64 leaves room for any honest document and keeps every decoder far below
  its own limit (pydantic-core's reader stops at 200 levels, the first
  edition wrote up to 253 and then could not read its own log back). An
  event's `data` wraps such a value in at most three levels of the host's own
  envelope (`message/assistant` → `toolCalls` → a call → `arguments`), so the
  storage rule is `MAX_EVENT_DEPTH` = 67.
- **Size**, in UTF-8 bytes of the canonical JSON:
  - a tool call's arguments: `MAX_ARGUMENTS_BYTES` = 64 KiB (what a model
    sends a tool is a few hundred bytes; a page of text is well inside);
  - a message's text (a person's, or the model's answer or reasoning):
    `MAX_TEXT_BYTES` = 1 MiB, the same as an HTTP request body;
  - a tool's result: `MAX_RESULT_BYTES` = 1 MiB;
  - one event's `data`, whatever its type: `MAX_EVENT_BYTES` = 4 MiB (room
    for an answer, its reasoning and its calls in one `message/assistant`;
    a history page of 100 events stays bounded).
- **Tool calls per reply**: `MAX_TOOL_CALLS` = 64. Calls past it are kept in
  the stored reply (with their arguments left out) and answered
  `too_many_calls` without running, so one reply cannot start thousands of
  tool runs.

Reading is not bounded by these numbers: a stored log is read back at any
depth a writer of any edition could have written (`dsh.session` decodes
deeper values than pydantic-core's limit with the standard library's parser).
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import LimitExceeded

__all__ = [
    "MAX_ARGUMENTS_BYTES",
    "MAX_DEPTH",
    "MAX_EVENT_BYTES",
    "MAX_EVENT_DEPTH",
    "MAX_RESULT_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_TOOL_CALLS",
    "LimitExceeded",
    "check_depth",
    "check_text",
    "depth_of",
]

MAX_DEPTH = 64
MAX_EVENT_DEPTH = MAX_DEPTH + 3
MAX_ARGUMENTS_BYTES = 64 * 1024
MAX_TEXT_BYTES = 1024 * 1024
MAX_RESULT_BYTES = 1024 * 1024
MAX_EVENT_BYTES = 4 * 1024 * 1024
MAX_TOOL_CALLS = 64


def depth_of(value: object, stop: int | None = None) -> int:
    """How many containers (dicts and lists) `value` nests, without recursion.

    With `stop`, returns as soon as the depth is known to exceed it (the
    result is then `stop + 1`), so a hostile value costs at most its first
    `stop` levels.
    """
    deepest = 0
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if stop is not None and deepest > stop:
                return deepest
        pending.extend((child, depth) for child in children)
    return deepest


def check_depth(value: object, what: str, limit: int = MAX_DEPTH) -> None:
    """Raise `LimitExceeded` if `value` nests more than `limit` containers."""
    if depth_of(value, limit) > limit:
        raise LimitExceeded(f"{what}: nested more than {limit} levels deep")


def check_text(text: str, what: str, limit: int = MAX_TEXT_BYTES) -> None:
    """Raise `LimitExceeded` if `text` is longer than `limit` bytes of UTF-8."""
    # A character is at most 4 bytes: only a long text needs encoding to be sure.
    if len(text) * 4 > limit and len(text.encode("utf-8", "surrogatepass")) > limit:
        raise LimitExceeded(f"{what}: longer than the limit of {limit:,} bytes")
