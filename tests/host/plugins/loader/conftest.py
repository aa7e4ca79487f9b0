from __future__ import annotations

from pathlib import Path

import pytest

from tests.host.fixtures.distributions import FakeSite


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSite:
    """A fresh directory of fake distributions at the front of `sys.path`."""
    return FakeSite(tmp_path / "site", monkeypatch)
