"""Shared fixtures of the reliability run: its scale, its seed and its figures.

- `scale` is 1 for the bounded default run and `LONG_FACTOR` under `--long`
  (the option itself lives in `tests/conftest.py`: pytest reads options only
  from initial conftests). Every test multiplies its rounds, faults and
  examples by it.
- `seed` is `$DSH_RELIABILITY_SEED` when set, else a fresh random number. It
  is logged and written to the figures so that any failing run can be
  replayed exactly; `rng` derives a per-test `random.Random` from it. Under
  pytest-xdist every worker uses the same seed (`tests/conftest.py` sets the
  variable before the workers start).
- `figures` collects what every test injected and found; at the end of the
  session it is written to `test-output/reliability/figures.json` and
  summarised in the terminal report. Each xdist worker writes its own
  `figures-<worker>.json`, which the controller gathers into that file
  (`tests/conftest.py`).
"""

from __future__ import annotations

import logging
import os
import random
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from .figures import FIGURES_PATH, REPO, SEED_ENV, Figures

LONG_FACTOR = 10
_FIGURES = pytest.StashKey[Figures]()

log = logging.getLogger("dsh.reliability")


@pytest.fixture(scope="session")
def scale(request: pytest.FixtureRequest) -> int:
    """How much bigger than the default run this one is (`--long`: `LONG_FACTOR`)."""
    return LONG_FACTOR if request.config.getoption("--long") else 1


@pytest.fixture(scope="session")
def seed() -> int:
    value = os.environ.get(SEED_ENV)
    chosen = int(value) if value else secrets.randbits(32)
    log.warning("reliability seed %d (replay with %s=%d)", chosen, SEED_ENV, chosen)
    return chosen


@pytest.fixture
def rng(seed: int, request: pytest.FixtureRequest) -> random.Random:
    """A random source for one test, derived from the run's seed and the test's name."""
    return random.Random(f"{seed}:{request.node.nodeid}")


@pytest.fixture(scope="session")
def figures(request: pytest.FixtureRequest, seed: int, scale: int) -> Iterator[Figures]:
    collected = Figures(seed=seed, long=scale > 1)
    request.config.stash[_FIGURES] = collected
    yield collected
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    path = collected.write(worker_figures(worker) if worker else FIGURES_PATH)
    for line in collected.summary():
        log.warning("figures %s", line)
    log.warning("figures written to %s", path)


def worker_figures(worker: str) -> Path:
    """Where an xdist worker leaves its figures for the controller to gather."""
    return FIGURES_PATH.with_name(f"figures-{worker}.json")


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    collected = config.stash.get(_FIGURES, None)
    if collected is None:
        return
    terminalreporter.section("reliability figures")
    for line in collected.summary():
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"written to {FIGURES_PATH.relative_to(REPO)}")
