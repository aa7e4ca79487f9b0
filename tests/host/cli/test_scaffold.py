"""`dsh plugin new NAME`: a plugin distribution whose test passes as generated."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

from dsh.cli import COMMANDS
from dsh.cli.errors import CommandError
from dsh.cli.scaffold import BUILTIN_COMMANDS, scaffold
from tests.support.webhost import REPO

from ..fixtures.distributions import FakeSite
from .conftest import Cli

PANEL_HARNESS = REPO / "tests" / "client" / "scaffold-panel.harness.mjs"

FILES = [
    "pyproject.toml",
    "README.md",
    "src/dsh_tool_clock/__init__.py",
    "src/dsh_tool_clock/py.typed",
    "src/dsh_tool_clock/plugin.py",
    "src/dsh_tool_clock/static/panel.js",
    "tests/test_plugin.py",
]


def test_plugin_new_writes_the_distribution_and_says_what_next(dsh: Cli, tmp_path: Path) -> None:
    target = tmp_path / "clock"

    result = dsh("plugin", "new", "tool-clock", "--directory", str(target))

    assert result.code == 0
    assert result.out.splitlines() == [str(target / name) for name in FILES]
    assert result.err.startswith(f"next: cd {target} && pip install -e '.[test]' && pytest")
    project = tomllib.loads((target / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["name"] == "dsh-tool-clock"
    assert project["project"]["dependencies"] == ["dsh-host"]
    assert project["project"]["entry-points"]["dsh.plugins"] == {
        "tool-clock": "dsh_tool_clock.plugin:ToolClockPlugin"
    }
    assert project["tool"]["mypy"]["strict"] is True


def test_the_default_directory_is_dsh_name(
    dsh: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert dsh("plugin", "new", "echo").code == 0
    assert (tmp_path / "dsh-echo" / "src" / "dsh_echo" / "plugin.py").is_file()


@pytest.mark.parametrize("name", ["Tool", "tool_clock", "-x", "9lives", "a" * 33])
def test_a_name_that_is_no_plugin_name_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="is not a plugin name"):
        scaffold(name, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_builtin_names_it_refuses_are_the_builtin_commands() -> None:
    assert {command.name for command in COMMANDS} == BUILTIN_COMMANDS


def test_a_builtin_command_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="'web' is a dsh command already"):
        scaffold("web", tmp_path / "out")


def test_an_existing_directory_is_never_overwritten(dsh: Cli, tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()

    result = dsh("plugin", "new", "echo", "--directory", str(tmp_path / "taken"))

    assert result.code == 1
    assert result.err == (
        f"dsh: error: {tmp_path / 'taken'} exists already; choose another with --directory DIR\n"
    )


@pytest.fixture
def generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The scaffold's test module, its plugin importable and installed (as `pip install -e`)."""
    root = tmp_path / "dsh-tool-clock"
    scaffold("tool-clock", root)
    monkeypatch.syspath_prepend(str(root / "src"))
    for module in ("dsh_tool_clock", "dsh_tool_clock.plugin"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    FakeSite(tmp_path / "site", monkeypatch).install(
        "dsh-tool-clock", project["project"]["entry-points"]["dsh.plugins"]
    )
    module = types.ModuleType("test_plugin")
    source = (root / "tests" / "test_plugin.py").read_text(encoding="utf-8")
    exec(compile(source, str(root / "tests" / "test_plugin.py"), "exec"), module.__dict__)
    return module


@pytest.mark.anyio
async def test_the_generated_tool_test_passes(generated: types.ModuleType) -> None:
    await generated.test_the_tool_answers_the_time_in_the_persons_zone()


def test_the_generated_command_test_passes(generated: types.ModuleType) -> None:
    generated.test_the_command_prints_the_time_in_a_zone_and_refuses_an_unknown_one()


@pytest.mark.anyio
async def test_the_generated_state_test_passes(generated: types.ModuleType) -> None:
    await generated.test_the_state_the_panel_shows_is_the_tools_last_answer()


@pytest.mark.anyio
async def test_the_generated_panel_test_passes(generated: types.ModuleType) -> None:
    await generated.test_the_panel_is_served_to_the_browser()


@pytest.mark.process
@pytest.mark.parametrize("name", ["tool-clock", "x", "a-very-long-plugin-name-of-32-ch"])
def test_the_generated_code_passes_ruff(tmp_path: Path, name: str) -> None:
    root = tmp_path / f"dsh-{name}"
    scaffold(name, root)

    checked = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    formatted = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert formatted.returncode == 0, formatted.stdout + formatted.stderr


@pytest.mark.process
@pytest.mark.parametrize("name", ["tool-clock", "a-very-long-plugin-name-of-32-ch"])
def test_the_generated_panel_renders_the_state_as_text_in_the_page(
    tmp_path: Path, name: str
) -> None:
    root = tmp_path / f"dsh-{name}"
    scaffold(name, root)
    panel = root / "src" / f"dsh_{name.replace('-', '_')}" / "static" / "panel.js"
    env = {**os.environ, "DSH_SCAFFOLD_PANEL": str(panel), "DSH_SCAFFOLD_PLUGIN": name}

    done = subprocess.run(
        ["node", "--test", str(PANEL_HARNESS)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "# pass 3" in done.stdout and "# fail 0" in done.stdout, done.stdout
