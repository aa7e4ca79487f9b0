"""How long a test waits for something before it fails.

A deadline bounds a failure; it never measures a speed (timing goals live in
`bench/`). It is generous because the suite runs under coverage on small,
shared CI machines, where a CPU three times slower than usual has been seen
(2026-12-02): a wait that takes 5 s there is slow, not broken, and only a
wait that never ends is a failure worth reporting.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.lowlevel

__all__ = ["WAIT", "until"]

WAIT = 30.0


async def until(condition: Callable[[], object], what: str = "the condition") -> None:
    """Let the loop run until `condition()` is true; fail after `WAIT` seconds naming `what`."""
    with anyio.fail_after(WAIT):
        while not condition():
            await anyio.lowlevel.checkpoint()
    assert condition(), what
