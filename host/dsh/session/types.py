"""The names of the host's own event types, defined once (docs/DESIGN.md §2).

Types are namespaced `area/name` (`EVENT_TYPE_PATTERN`); the host owns these
six, each plugin the ones named after it (`schedule/change`). Their payloads
are in `dsh.session.events` (`HOST_EVENT_TYPES` maps each to its model).
"""

from __future__ import annotations

__all__ = [
    "ASSISTANT_MESSAGE",
    "END_SEED",
    "EVENT_TYPE_PATTERN",
    "SESSION_TITLE",
    "TOOL_RESULT",
    "TURN_END",
    "USER_MESSAGE",
]

EVENT_TYPE_PATTERN = r"^[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*$"

USER_MESSAGE = "message/user"
ASSISTANT_MESSAGE = "message/assistant"
TOOL_RESULT = "tool/result"
TURN_END = "turn/end"
END_SEED = "session/end-seed"
SESSION_TITLE = "session/title"
