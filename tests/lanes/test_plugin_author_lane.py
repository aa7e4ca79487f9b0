"""The plugin author's lane: the README's "Write a plugin", followed to the letter.

The README's plugin, its `pyproject.toml` and its test become a distribution
in a temporary folder; a fresh virtual environment gets this checkout of
dsh and the plugin, each with only the `test` extra the README names (pip
builds both from their folders); then the plugin's test runs there with
pytest (no conftest: `dsh.testing`'s pytest plugin sets up anyio) and its
code passes `mypy --strict`. What a reader would do, nothing more.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.lanes.installs import run
from tests.support.webhost import REPO
from tests.test_readme import EXAMPLES

pytestmark = pytest.mark.lane


def write_distribution(root: Path) -> Path:
    """The README's plugin as the distribution its pyproject describes."""
    package = root / "src" / "dsh_echo"
    package.mkdir(parents=True)
    (root / "pyproject.toml").write_text(EXAMPLES["plugin-pyproject"], encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "py.typed").write_text("", encoding="utf-8")
    (package / "plugin.py").write_text(EXAMPLES["plugin"], encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_echo.py").write_text(EXAMPLES["plugin-test"], encoding="utf-8")
    return root


def test_the_readme_plugin_installs_with_its_test_extra_passes_its_test_and_mypy_strict(
    tmp_path: Path,
) -> None:
    plugin = write_distribution(tmp_path / "dsh-echo")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, f"{REPO}[test]", "-e", f"{plugin}[test]"], cwd=tmp_path, timeout=600)

    tested = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=plugin)
    typed = run([python, "-m", "mypy", "--strict", "src", "tests"], cwd=plugin)

    assert "2 passed" in tested, tested
    assert "Success: no issues found in 3 source files" in typed, typed
