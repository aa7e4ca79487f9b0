"""How a long command shows how far it got, on stderr.

On a terminal (`stream.isatty()`), one line redrawn in place:

    sessions  [##########..........]  120/240  18,400 events

Otherwise (a log, a pipe, a test) plain lines, one when a phase starts, one
each time another tenth of it is done and one when it ends, so a log shows
progress without a line per item:

    sessions: 0/240
    sessions: 24/240 (3,120 events)
    ...
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["LineProgress"]

WIDTH = 20
REDRAW_SECONDS = 0.1  # a terminal line redrawn at most this often


class LineProgress:
    """A `Progress` (`dsh.cli.transfer.copy`) writing to `stream` (see the module docstring)."""

    def __init__(self, stream: TextIO, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.terminal = bool(getattr(stream, "isatty", lambda: False)())
        self._clock = clock
        self._what = ""
        self._total = 0
        self._done = 0
        self._events = 0
        self._shown = -1  # the tenth (plain lines) last written
        self._drawn = 0.0

    def start(self, what: str, total: int) -> None:
        self._what, self._total, self._done, self._events, self._shown = what, total, 0, 0, -1
        self._drawn = 0.0
        self._show(force=True)

    def advance(self, events: int = 0) -> None:
        self._done += 1
        self._events += events
        self._show(force=self._done == self._total)

    def finish(self) -> None:
        if self.terminal:
            self._draw()
            self.stream.write("\n")
        elif self._shown != 10:
            self._line()
        self.stream.flush()

    def _show(self, *, force: bool) -> None:
        if self.terminal:
            now = self._clock()
            if force or now - self._drawn >= REDRAW_SECONDS:
                self._drawn = now
                self._draw()
            return
        tenth = 10 if self._total == 0 else self._done * 10 // self._total
        if tenth != self._shown:
            self._shown = tenth
            self._line()

    def _events_text(self) -> str:
        return f"{self._events:,} event{'s' * (self._events != 1)}"

    def _line(self) -> None:
        events = f" ({self._events_text()})" if self._events else ""
        self.stream.write(f"{self._what}: {self._done}/{self._total}{events}\n")

    def _draw(self) -> None:
        filled = WIDTH if self._total == 0 else self._done * WIDTH // self._total
        bar = "#" * filled + "." * (WIDTH - filled)
        self.stream.write(
            f"\r{self._what:<9} [{bar}]  {self._done}/{self._total}  {self._events_text()}"
        )
        self.stream.flush()
