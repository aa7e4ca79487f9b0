"""Strict mode: a tool or hook that raises fails the test, with its traceback.

A running Host contains a plugin's failures: a tool that raises becomes an
`internal_error` result the model reads, a hook that raises is logged and
skipped (`dsh.plugins.hooks`). That keeps a server up, and hides a bug in a
test. `Strict` listens to the two log lines those containments write (the
`dsh.agents.tools` and `dsh.plugins.hooks` loggers, at ERROR, with the
exception attached) and `check()` raises `StrictModeError` listing each
failure with its formatted traceback.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Strict", "StrictModeError"]

# The loggers whose ERROR records mean "a plugin's code raised and it was contained".
CONTAINED = ("dsh.agents.tools", "dsh.plugins.hooks")


class StrictModeError(AssertionError):
    """A tool or hook raised while strict mode was on; the message holds each traceback."""


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Strict:
    """Records the contained failures of plugin code while `watching()`."""

    def __init__(self) -> None:
        self._recorder = _Recorder()

    @contextmanager
    def watching(self) -> Iterator[Strict]:
        """Record failures inside this block (the loggers are restored after)."""
        loggers = [logging.getLogger(name) for name in CONTAINED]
        for logger in loggers:
            logger.addHandler(self._recorder)
        try:
            yield self
        finally:
            for logger in loggers:
                logger.removeHandler(self._recorder)

    @property
    def failures(self) -> list[str]:
        """Each recorded failure: its log line, then its traceback."""
        found = []
        for record in self._recorder.records:
            text = record.getMessage()
            if record.exc_info is not None and record.exc_info[1] is not None:
                text += "\n" + "".join(traceback.format_exception(record.exc_info[1]))
            found.append(text)
        return found

    def check(self) -> None:
        """Raise `StrictModeError` if any tool or hook raised; forget them after."""
        failures = self.failures
        self._recorder.records.clear()
        if failures:
            raise StrictModeError(
                f"{len(failures)} failure{'s' if len(failures) > 1 else ''} contained by the "
                "host (strict mode; pass strict=False to allow them):\n\n" + "\n\n".join(failures)
            )
