"""Where dsh keeps its data by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.persistence.datadir import default_data_dir


def test_the_data_dir_is_dsh_data_dir_else_under_the_home(monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_data_dir({"DSH_DATA_DIR": "/srv/dsh"}) == Path("/srv/dsh")
    assert default_data_dir({"DSH_DATA_DIR": ""}) == Path.home() / ".local" / "share" / "dsh"
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.delenv("DSH_DATA_DIR", raising=False)
    assert default_data_dir() == Path("/home/someone/.local/share/dsh")
