"""`dsh web --log-format json`: one JSON object per line, as a collector reads it."""

from __future__ import annotations

import json
import logging
import logging.config
import re
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from dsh.web.logs import JsonLogFormatter, log_formatter, uvicorn_log_config
from dsh.web.redact import RedactToken

SESSION = "a1b2c3d4e5f60718"


def record(msg: str, *args: object, **extra: Any) -> logging.LogRecord:
    made = logging.LogRecord("dsh.test", logging.WARNING, __file__, 1, msg, args or None, None)
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def line(made: logging.LogRecord) -> dict[str, Any]:
    text = JsonLogFormatter().format(made)
    assert "\n" not in text  # one object per line, a traceback included
    parsed: dict[str, Any] = json.loads(text)
    return parsed


def test_a_line_has_time_level_logger_and_message() -> None:
    made = record("stored %d events of %s", 3, "ü 😀")
    made.created = datetime(2026, 12, 4, 9, 0, 0, 45_600, tzinfo=UTC).timestamp()
    assert line(made) == {
        "time": "2026-12-04T09:00:00.045Z",
        "level": "WARNING",
        "logger": "dsh.test",
        "message": "stored 3 events of ü 😀",
    }


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (record("session %s: writing stopped", SESSION), SESSION),
        (record("wake index: session %s is no longer stored", SESSION), SESSION),
        (record("anything", session_id=SESSION), SESSION),
        (record("session %s was closed", "not an id!"), None),
        (record("sessions %s and more", SESSION), None),
        (record("%s: session", SESSION), None),
        (record("session was never used"), None),
    ],
)
def test_the_session_is_named_only_where_the_line_is_about_one(
    made: logging.LogRecord, expected: str | None
) -> None:
    assert line(made).get("session_id") == expected


def test_a_traceback_and_a_stack_are_fields_of_the_same_line() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        made = record("it failed")
        made.exc_info = sys.exc_info()
    made.stack_info = "Stack (most recent call last):\n  here"
    found = line(made)
    assert found["exc_info"].startswith("Traceback") and "ValueError: boom" in found["exc_info"]
    assert found["stack_info"].endswith("here")


def test_a_cleaned_record_stays_clean_in_json() -> None:
    token = "Zq8'\"tok-1234567890"
    made = record("GET /?token=%s with %s", token, f"Authorization: Bearer {token}")
    RedactToken(token).filter(made)
    text = JsonLogFormatter().format(made)
    assert "tok-12345" not in text and "[redacted]" in text


def test_the_text_format_is_unchanged_and_json_is_one_formatter() -> None:
    made = record("hello")
    assert log_formatter("text").format(made) == "WARNING dsh.test: hello"
    assert isinstance(log_formatter("json"), JsonLogFormatter)


def test_uvicorns_lines_are_json_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert uvicorn_log_config("text")["formatters"]["access"]["()"].startswith("uvicorn.")
    config = uvicorn_log_config("json")
    logging.config.dictConfig(config)
    try:
        logging.getLogger("uvicorn.error").info("Started server process [%d]", 42)
        logging.getLogger("uvicorn.access").info(
            '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "GET", "/api/health", "1.1", 200
        )
    finally:
        for name in ("uvicorn", "uvicorn.access"):
            logging.getLogger(name).handlers.clear()
            logging.getLogger(name).propagate = True
    captured = capsys.readouterr()
    lines = [json.loads(text) for text in (captured.err + captured.out).splitlines()]
    assert [entry["logger"] for entry in lines] == ["uvicorn.error", "uvicorn.access"]
    assert lines[0]["message"] == "Started server process [42]"
    assert re.fullmatch(r'127\.0\.0\.1:5 - "GET /api/health HTTP/1\.1" 200', lines[1]["message"])
