"""The access token never reaches a log, however a log line spells it.

A log line can carry the token in many spellings: as typed; percent-encoded
in a URL (`%27`, `%C3%A9`, lower- or upper-case hex, `+` for a space,
double-encoded `%2527`), escaped by `repr()` or JSON (`\\'`, `\\"`,
`\\\\`, `\\xe9`, `\\u00e9`, a surrogate pair), or any mixture of those,
character by character (a browser encodes `"` and spaces but leaves `'`
alone). `TokenRedactor` builds one pattern that matches the token in every
such spelling and replaces it with `[redacted]` — and not only the whole
token: any run of `WINDOW` (8) consecutive characters of it, because a
wrong or truncated token a client presents may be most of the real one, and
a raw `&` in a token splits it into two query parameters. It also redacts
the value of every `token=` parameter and every bearer credential,
whatever it is.

`redacted_logs(token)` applies it to every log record of the process while
it is active, by wrapping the logging module's record factory: uvicorn's
error and access logs, asyncio's, our own loggers and a plugin's. The
message, each string argument (and string values of a mapping argument),
string attributes added through `extra=` (a format that itself shows a
secret, `"?token=%s"`, is rendered first), the traceback of `exc_info`
(formatted once, redacted, and kept as `exc_text`, which formatters use)
and `stack_info` are all cleaned; a message that still shows the token
through a non-string argument (an exception, bytes, a dict) is replaced by
its cleaned rendering. `RedactToken` is the same cleaning as a
`logging.Filter`, for handlers or loggers of one's own.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

__all__ = ["REDACTED", "RedactToken", "TokenRedactor", "redacted_logs"]

REDACTED = "[redacted]"
# Any run of this many consecutive characters of the token is redacted too: a
# wrong or truncated token may be most of the real one.
WINDOW = 8
ESCAPES = 16
_ANY_ESCAPES = rf"\\{{0,{ESCAPES}}}+"
_SOME_ESCAPES = rf"\\{{1,{ESCAPES}}}+"
# Attributes every LogRecord has; anything else was added through `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message"}
# `token=value` (also `token%3Dvalue`) and `Bearer value`, for values that are not the token.
_PARAMETER = re.compile(r"(?i)(token(?:=|%3d))(?:(?!%26)[^\s&])*")
_BEARER = re.compile(r"(?i)(\bbearer\s+)[^\s'\",;)\]}]+")


def _hex(value: int, width: int) -> str:
    """`value` as hex digits matching either case."""
    digits = f"{value:0{width}x}"
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in digits)


def _spellings(char: str) -> str:
    """A pattern for one character of the token in any spelling a log may use.

    Backslashes that `repr()` or JSON put before a character (nesting adds
    more: 1, 3, 7, 15…) are matched possessively and at most `ESCAPES` of
    them, so no input makes matching slower than linear.
    """
    code = ord(char)
    encoded = char.encode("utf-8", "surrogatepass")
    percent = "".join(f"%(?:25)?{_hex(byte, 2)}" for byte in encoded)
    if char == "\\":
        return f"(?:{_SOME_ESCAPES}|{percent})"
    plain = [percent, re.escape(char)] + ([r"\+"] if char == " " else [])
    escaped = []  # what follows the backslashes of an escape sequence
    if code < 0x100:
        escaped.append(f"x{_hex(code, 2)}")
    if len(encoded) > 1:  # a bytes repr: each UTF-8 byte as \xhh
        escaped.append(_SOME_ESCAPES.join(f"x{_hex(byte, 2)}" for byte in encoded))
    if code < 0x10000:
        escaped.append(f"u{_hex(code, 4)}")
    else:
        high, low = divmod(code - 0x10000, 0x400)
        escaped.append(f"u{_hex(0xD800 + high, 4)}{_SOME_ESCAPES}u{_hex(0xDC00 + low, 4)}")
        escaped.append(f"U{_hex(code, 8)}")
    return f"(?:{_ANY_ESCAPES}(?:{'|'.join(plain)})|{_SOME_ESCAPES}(?:{'|'.join(escaped)}))"


class TokenRedactor:
    """Replaces the token and any run of `WINDOW` of its characters (in any spelling),
    `token=` values and bearer credentials."""

    def __init__(self, token: str) -> None:
        if not token:
            raise ValueError("cannot redact an empty token")
        size = min(WINDOW, len(token))
        chars = [_spellings(char) for char in token]
        windows = {"".join(chars[i : i + size]) for i in range(len(token) - size + 1)}
        # A lookahead finds every window, overlapping ones too; their union is redacted.
        self._windows = re.compile(f"(?=({'|'.join(sorted(windows))}))")

    def __call__(self, text: str) -> str:
        text = self._redact_windows(text)
        text = _PARAMETER.sub(rf"\g<1>{REDACTED}", text)
        return _BEARER.sub(rf"\g<1>{REDACTED}", text)

    def _redact_windows(self, text: str) -> str:
        spans: list[list[int]] = []
        for match in self._windows.finditer(text):
            start, end = match.span(1)
            if spans and start <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], end)
            else:
                spans.append([start, end])
        if not spans:
            return text
        pieces, last = [], 0
        for start, end in spans:
            pieces += [text[last:start], REDACTED]
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    def clean(self, record: logging.LogRecord) -> None:
        """Redact everything of `record` a formatter will write (see the module docstring)."""
        if isinstance(record.msg, str):
            cleaned = self(record.msg)
            if cleaned != record.msg and record.args:
                # The format itself matched (`"?token=%s"`): cleaning it would eat its
                # placeholders and break the line, so render it, then clean the rendering.
                # A broken format stays: logging reports it, with the cleaned arguments.
                with contextlib.suppress(Exception):
                    cleaned, record.args = self(record.getMessage()), None
            record.msg = cleaned
        record.args = self._args(record.args)
        for name, value in list(vars(record).items()):
            if name not in _STANDARD and isinstance(value, str):
                setattr(record, name, self(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self(record.exc_text)
        if record.stack_info:
            record.stack_info = self(record.stack_info)
        self._render_if_leaking(record)

    def _args(self, args: Any) -> Any:
        if isinstance(args, tuple):
            return tuple(self(arg) if isinstance(arg, str) else arg for arg in args)
        if isinstance(args, Mapping):
            return {key: self(v) if isinstance(v, str) else v for key, v in args.items()}
        return args

    def _render_if_leaking(self, record: logging.LogRecord) -> None:
        if not record.args and isinstance(record.msg, str):
            return
        try:
            message = record.getMessage()
        except Exception:
            return  # a broken format: logging reports it, with the cleaned arguments
        cleaned = self(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None


class RedactToken(logging.Filter):
    """A logging filter that cleans every record it sees (it never drops one)."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._redactor = TokenRedactor(token)

    def filter(self, record: logging.LogRecord) -> bool:
        self._redactor.clean(record)
        return True


@contextmanager
def redacted_logs(token: str) -> Iterator[TokenRedactor]:
    """Clean every log record created in this process while the block runs."""
    redactor = TokenRedactor(token)
    previous = logging.getLogRecordFactory()
    active = True

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if active:
            redactor.clean(record)
        return record

    logging.setLogRecordFactory(factory)
    try:
        yield redactor
    finally:
        if logging.getLogRecordFactory() is factory:
            logging.setLogRecordFactory(previous)
        else:
            active = False  # someone wrapped our factory since: it stays, doing nothing
