"""The `pytest11` plugin: a plugin's suite runs async tests with no conftest of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUITE = """
import logging

import anyio


async def test_an_async_test_runs_without_a_marker_or_a_conftest():
    await anyio.sleep(0)


class TestInAClass:
    async def test_the_backend_is_asyncio(self, anyio_backend):
        assert anyio_backend == "asyncio"


def test_strict_fails_on_a_contained_failure(dsh_strict):
    try:
        raise RuntimeError("hidden by the host")
    except RuntimeError:
        logging.getLogger("dsh.plugins.hooks").exception("plugin x failed in dsh_y")
"""


def test_a_fresh_suite_runs_async_tests_and_strict_fails_a_contained_failure(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert (
        "3 passed, 1 error" in done.stdout
    )  # the strict one errs at teardown, done.stdout + done.stderr
    assert "StrictModeError: 1 failure contained by the host" in done.stdout
    assert "RuntimeError: hidden by the host" in done.stdout
