from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from dsh.cli import main

from ..fixtures.distributions import FakeSite


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


class Cli:
    """Runs `dsh` in-process with captured streams."""

    def __call__(self, *argv: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), stdout=out, stderr=err)
        return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def dsh() -> Cli:
    return Cli()


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSite:
    """A fresh directory of fake distributions at the front of `sys.path`."""
    return FakeSite(tmp_path / "site", monkeypatch)
