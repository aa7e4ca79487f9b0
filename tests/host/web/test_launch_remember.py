"""`dsh web` keeps what the data dir remembers (JSONL only), and serves on if it cannot."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from dsh.persistence.backends import choose_backend
from dsh.plugins.overlay import Overlay
from dsh.web.launch import _remember
from dsh.web.running import running_web


def test_a_jsonl_data_dir_remembers_the_address_once_listening(tmp_path: Path) -> None:
    remember = _remember(choose_backend(None, tmp_path), Overlay.default())
    assert remember is not None
    remember("http://127.0.0.1:9/")
    running = running_web(tmp_path)
    assert running is not None and (running.url, running.overlay) == ("http://127.0.0.1:9/", None)


def test_other_stores_remember_nothing(tmp_path: Path) -> None:
    assert _remember(choose_backend("memory:", tmp_path), Overlay.default()) is None


def test_a_data_dir_that_cannot_be_written_is_a_warning_not_a_stop(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "gone"  # the data dir vanished: the file cannot be written there
    remember = _remember(choose_backend(None, missing), Overlay.default())
    assert remember is not None
    with caplog.at_level(logging.WARNING):
        remember("http://127.0.0.1:9/")
    assert [record.getMessage() for record in caplog.records] == [
        f"cannot keep web.json in {missing}: No such file or directory"
    ]
