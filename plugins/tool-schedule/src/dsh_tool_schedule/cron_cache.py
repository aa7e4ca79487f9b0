"""`CronCache`: each distinct cron expression of a fold parsed once, not once per record.

A log's cron reminders mostly share a few expressions, and a parse (the
plugin's field checks, then cronsim's) costs ≈ 15–20 µs, what `json.loads`
of six or so whole `schedule/change` events costs. The fold keeps one cache: its plain check
asks it whether a record's cron text is valid and written normally, and
each cron record's series is built from the expression it hands out.

Bounded: the `size` most recently used texts (default 16; a `CronSim`
holds its fields as sets, up to ≈ 9 KB for `* * * * *`). A text that does
not parse raises `CronError`, as `CronExpression` does, and is not kept.
Not thread-safe: a fold is advanced by one thread at a time, and a copy of
a fold gets a copy of its cache.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from .cron import CronExpression

__all__ = ["DEFAULT_SIZE", "CronCache"]

DEFAULT_SIZE: Final = 16


class CronCache:
    """Parsed cron expressions by the text they were read from (see the module docstring)."""

    __slots__ = ("_held", "size")

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError(f"a cron cache holds at least one expression, not {size}")
        self.size = size
        self._held: OrderedDict[str, CronExpression] = OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def parse(self, text: str) -> CronExpression:
        """`CronExpression(text)`, parsed only if `text` is not held; `CronError` as it raises."""
        held = self._held.get(text)
        if held is not None:
            self._held.move_to_end(text)
            return held
        parsed = CronExpression(text)
        self._held[text] = parsed
        if len(self._held) > self.size:
            self._held.popitem(last=False)
        return parsed

    def copy(self) -> CronCache:
        """An independent cache holding the same expressions (they are shared: immutable)."""
        twin = CronCache(self.size)
        twin._held = self._held.copy()
        return twin

    def clear(self) -> None:
        """Drop every held expression."""
        self._held.clear()
