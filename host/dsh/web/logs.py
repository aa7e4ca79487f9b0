"""How `dsh web` writes its log: text for a person, or one JSON object per line.

`--log-format json` (else `$DSH_LOG_FORMAT`, else `text`; DESIGN §14.3)
makes every line of the process one JSON object a log collector parses
without rules of its own:

    {"time": "2026-12-04T09:00:00.123Z", "level": "WARNING",
     "logger": "dsh.persistence.coordinator", "message": "session … failed",
     "session_id": "…", "exc_info": "Traceback …"}

`time` is RFC 3339 in UTC with milliseconds; `session_id` is there when
the line is about one Session — given as `extra={"session_id": …}`, or
the argument of a format that starts `session %s` (`wake index: session
%s …`), as dsh's own lines about a Session are written; `exc_info` (the
formatted traceback) and `stack_info` only when the record has them.
uvicorn's own lines (start-up, the access log) take the same form,
through `uvicorn_log_config`.

The access token is cleaned out of every record before any formatter sees
it (`redact.redacted_logs`), so both formats are as clean as each other.
"""

from __future__ import annotations

import copy
import json
import logging
import re
from datetime import UTC, datetime
from typing import Any, Literal

from uvicorn.config import LOGGING_CONFIG

from ..base.visible import VisibleFormatter
from ..session.ids import SESSION_ID_PATTERN

__all__ = [
    "LOG_FORMATS",
    "TEXT_FORMAT",
    "JsonLogFormatter",
    "LogFormat",
    "log_formatter",
    "uvicorn_log_config",
]

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[LogFormat, ...] = ("text", "json")
#: The text format of dsh's own lines (uvicorn keeps its own in text).
TEXT_FORMAT = "%(levelname)s %(name)s: %(message)s"

# A line about a Session: its format starts "session %s" (the first argument is the id).
_ABOUT_A_SESSION = re.compile(r"(?:[a-z ]+: )?session %s\b")


class JsonLogFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _rfc3339(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        session_id = _session_of(record)
        if session_id is not None:
            line["session_id"] = session_id
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


def _session_of(record: logging.LogRecord) -> str | None:
    """The Session a record is about: `extra={"session_id": …}`, else the first argument
    of a format that starts `session %s` (optionally after a `part: ` prefix)."""
    given = getattr(record, "session_id", None)
    if isinstance(given, str):
        return given
    args = record.args
    if (
        isinstance(record.msg, str)
        and isinstance(args, tuple)
        and args
        and isinstance(args[0], str)
        and _ABOUT_A_SESSION.match(record.msg)
        and SESSION_ID_PATTERN.fullmatch(args[0])
    ):
        return args[0]
    return None


def log_formatter(log_format: LogFormat) -> logging.Formatter:
    """The formatter of dsh's own log lines in `log_format`."""
    # Text shows control characters as escapes: a line may quote a title or a model's error.
    return JsonLogFormatter() if log_format == "json" else VisibleFormatter(TEXT_FORMAT)


def uvicorn_log_config(log_format: LogFormat) -> dict[str, Any]:
    """uvicorn's logging configuration, with its formatters replaced for `json`."""
    config = copy.deepcopy(LOGGING_CONFIG)
    if log_format == "json":
        for name in config["formatters"]:
            config["formatters"][name] = {"()": f"{__name__}.JsonLogFormatter"}
    return config


def _rfc3339(created: float) -> str:
    moment = datetime.fromtimestamp(created, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
