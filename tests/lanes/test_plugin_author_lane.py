"""The plugin author's lane: the README's "Write a plugin", followed to the letter.

One test, as it needs a virtual environment and pip (about half a minute):
a fresh venv gets this checkout of dsh with only the `test` extra the README
names; then

1. `dsh plugin new tool-clock` (the venv's `dsh`) scaffolds a distribution,
   which installs with `pip install -e '.[test]'`, passes its own tests (the
   tool, the command, the state, the panel served), `mypy --strict` and ruff
   as generated, and builds a wheel that carries the panel's module;
2. the README's plugin, its `pyproject.toml` and its test become a
   distribution in a temporary folder, installed the same way; its test
   passes with pytest (no conftest: `dsh.testing`'s pytest plugin sets up
   anyio) and its code `mypy --strict`.

What a reader would do, nothing more.
"""

from __future__ import annotations

import sys
import zipfile
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


def test_the_scaffold_and_the_readme_plugin_install_pass_their_tests_and_mypy_strict(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python, dsh = str(venv / "bin" / "python"), str(venv / "bin" / "dsh")
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run([*pip, f"{REPO}[test]"], cwd=tmp_path, timeout=600)

    run([dsh, "plugin", "new", "tool-clock"], cwd=tmp_path)
    clock = tmp_path / "dsh-tool-clock"
    run([*pip, "-e", ".[test]"], cwd=clock, timeout=600)
    scaffold_tested = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=clock)
    scaffold_typed = run([python, "-m", "mypy", "--strict", "src", "tests"], cwd=clock)
    run([python, "-m", "ruff", "check", "--no-cache", "."], cwd=clock)
    wheels = tmp_path / "wheels"
    run([python, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), "."], cwd=clock)
    (wheel,) = wheels.glob("dsh_tool_clock-*.whl")
    with zipfile.ZipFile(wheel) as packed:
        shipped = packed.read("dsh_tool_clock/static/panel.js").decode("utf-8")

    echo = write_distribution(tmp_path / "dsh-echo")
    run([*pip, "-e", ".[test]"], cwd=echo, timeout=600)
    tested = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=echo)
    typed = run([python, "-m", "mypy", "--strict", "src", "tests"], cwd=echo)

    assert "4 passed" in scaffold_tested, scaffold_tested  # tool, command, state, panel
    assert "export function register(registry)" in shipped  # the panel is package data
    assert "2 passed" in tested, tested
    for output in (scaffold_typed, typed):
        assert "Success: no issues found in 3 source files" in output, output
