"""Unclosed sockets and files fail the test that leaked them, not a random later one.

A socket or file that a test never closes is closed by the garbage collector
when it finds it, with a `ResourceWarning` (an error under `filterwarnings =
error`). If the object sits in a reference cycle (an asyncio transport and
its protocol, a failed test's traceback), that happens at the next full
collection: during some later test, which then fails for a leak it did not
cause.

`reported_leaks()` wraps one test. It lists the process's open descriptors
(`/proc/self/fd`) before and after; only if the test left new ones open
(about 0.2 ms when it did not) does it run a full `gc.collect()` (50-200 ms
with this suite's heap, too slow for every test) and fail the test with
every `ResourceWarning` that collection raised. A descriptor that is still
referenced (a module-scoped server's keep-alive connection) is not a leak
and is left alone.

A failed test's traceback keeps its frames, and so its locals, alive until
the next test starts (pytest stores it as `sys.last_traceback` for
post-mortem debugging). When such a test left descriptors open, that
reference is dropped before collecting, so that the leak is reported with
the failure that caused it.

Run with `PYTHONTRACEMALLOC=20` to see where each leaked object was created.
"""

from __future__ import annotations

import gc
import os
import sys
import tracemalloc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["open_descriptors", "reported_leaks"]

DESCRIPTORS = Path("/proc/self/fd")


def open_descriptors() -> dict[int, str]:
    """This process's open descriptors and what each one is ("socket:[1234]", a path…).

    Empty without `/proc` (not Linux): the check is then off.
    """
    found: dict[int, str] = {}
    if not DESCRIPTORS.is_dir():
        return found
    for entry in os.listdir(DESCRIPTORS):
        try:
            found[int(entry)] = os.readlink(DESCRIPTORS / entry)
        except OSError:
            continue  # closed since the listing (the listing's own descriptor, for one)
    return found


def _describe(warning: warnings.WarningMessage) -> str:
    text = f"{warning.category.__name__}: {warning.message}"
    if warning.source is None or not tracemalloc.is_tracing():
        return text
    allocated = tracemalloc.get_object_traceback(warning.source)
    if allocated is None:
        return text
    return text + "\n  allocated at:\n" + "\n".join(allocated.format(most_recent_first=True))


def _collected_leaks() -> list[str]:
    """Collect the garbage now; the `ResourceWarning`s its finalizers raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        # What pytest keeps of a failed test for post-mortem debugging (and drops when
        # the next test starts) holds the failed test's frames and their locals.
        for name in ("last_exc", "last_type", "last_value", "last_traceback"):
            if hasattr(sys, name):
                delattr(sys, name)
        gc.collect()
    return [_describe(w) for w in caught if issubclass(w.category, ResourceWarning)]


@contextmanager
def reported_leaks() -> Iterator[None]:
    """Fail (at teardown) if the wrapped code left an unclosed resource for the collector."""
    before = open_descriptors()
    yield
    after = open_descriptors()
    if all(before.get(fd) == what for fd, what in after.items()):
        return
    leaks = _collected_leaks()
    if leaks:
        hint = "" if tracemalloc.is_tracing() else "\n(PYTHONTRACEMALLOC=20 shows where)"
        pytest.fail(
            f"this test left {len(leaks)} resource(s) unclosed:\n" + "\n".join(leaks) + hint,
            pytrace=False,
        )
