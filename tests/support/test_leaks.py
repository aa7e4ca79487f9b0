from __future__ import annotations

import socket
import sys

import pytest

from tests.support import leaks
from tests.support.leaks import open_descriptors, reported_leaks

LEFT_UNCLOSED = r"left 1 resource\(s\) unclosed:\nResourceWarning: unclosed <socket\.socket"


class Cycle:
    """Keeps `sock` in a reference cycle: only the garbage collector frees it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.me = self


def test_a_socket_left_in_a_cycle_fails_the_block_that_left_it() -> None:
    with pytest.raises(pytest.fail.Exception, match=LEFT_UNCLOSED), reported_leaks():
        Cycle(socket.socket())


def test_closed_and_still_referenced_descriptors_are_not_leaks() -> None:
    with reported_leaks():
        Cycle(socket.socket()).sock.close()
        kept = socket.socket()  # still referenced: its owner closes it later
    kept.close()


def test_a_leak_kept_alive_by_a_failed_tests_traceback_is_reported_with_that_failure() -> None:
    def failing() -> None:
        sock = socket.socket()
        raise RuntimeError(f"failed holding {sock}")

    with pytest.raises(pytest.fail.Exception, match=LEFT_UNCLOSED), reported_leaks():
        try:
            failing()
        except RuntimeError as error:  # what pytest keeps for post-mortem debugging
            sys.last_type, sys.last_value = RuntimeError, error
            sys.last_traceback = error.__traceback__
    assert not hasattr(sys, "last_traceback")


def test_without_new_descriptors_nothing_is_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    collections: list[object] = []
    monkeypatch.setattr(leaks.gc, "collect", lambda: collections.append(None))
    with reported_leaks():
        Cycle(object())
    assert collections == []


def test_open_descriptors_names_what_each_one_is() -> None:
    with socket.socket() as sock:
        assert open_descriptors()[sock.fileno()].startswith("socket:[")
    assert sock.fileno() == -1
