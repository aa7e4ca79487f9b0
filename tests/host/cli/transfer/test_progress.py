"""`LineProgress`: a bar redrawn in place on a terminal, a line per tenth otherwise."""

from __future__ import annotations

import io

from dsh.cli.transfer.progress import LineProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_say_each_tenth_once_and_the_end() -> None:
    stream = io.StringIO()
    progress = LineProgress(stream)
    progress.start("sessions", 20)
    for _ in range(20):
        progress.advance(3)
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "sessions: 0/20" and lines[-1] == "sessions: 20/20 (60 events)"
    assert len(lines) == 11 and "sessions: 2/20 (6 events)" in lines
    progress.start("trash", 0)
    progress.finish()
    assert stream.getvalue().splitlines()[-1] == "trash: 0/0"


def test_a_terminal_gets_one_bar_redrawn_at_most_every_tenth_of_a_second() -> None:
    stream = Terminal()
    now = [0.0]
    progress = LineProgress(stream, clock=lambda: now[0])
    progress.start("sessions", 4)
    progress.advance(1)  # too soon after the start: not drawn
    now[0] = 0.2
    progress.advance(1)
    progress.advance(1)  # too soon again
    progress.advance(1)  # the last one is always drawn
    progress.finish()
    text = stream.getvalue()
    frames = text.split("\r")[1:]
    assert frames[0] == "sessions  [....................]  0/4  0 events"
    assert frames[1] == "sessions  [##########..........]  2/4  2 events"
    assert frames[-1] == "sessions  [####################]  4/4  4 events\n"
    assert len(frames) == 4  # start, 0.2 s, the last, and the finish
