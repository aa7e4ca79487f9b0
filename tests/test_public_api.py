"""The public surface: `dsh.__all__` is the API, and plugins import nothing else of dsh."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import dsh
import dsh.testing

REPO = Path(__file__).resolve().parents[1]
PLUGIN_SOURCES = sorted((REPO / "plugins").glob("*/src/**/*.py"))


def dsh_imports(path: Path) -> list[str]:
    """Every `dsh.<module>` a source file imports (`import dsh.x`, `from dsh.x import y`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [module for module in modules if module.startswith("dsh.")]
    return found


def test_there_are_plugin_sources_to_check() -> None:
    assert len(PLUGIN_SOURCES) > 10


@pytest.mark.parametrize("path", PLUGIN_SOURCES, ids=lambda path: path.name)
def test_a_plugin_imports_only_the_dsh_facade(path: Path) -> None:
    assert dsh_imports(path) == [], f"{path} must import from dsh, not dsh.<module>"


def test_the_check_would_catch_a_module_import(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "import dsh\nimport dsh.agent\nfrom dsh.tools import Tool\nfrom dsh import Agent\n"
        "from .dsh import x\n",
        encoding="utf-8",
    )
    assert dsh_imports(source) == ["dsh.agent", "dsh.tools"]


@pytest.mark.parametrize("module", [dsh, dsh.testing], ids=lambda module: module.__name__)
def test_every_public_name_exists_and_is_listed_once(module: object) -> None:
    names = getattr(module, "__all__")  # noqa: B009
    assert len(names) == len(set(names))
    assert all(hasattr(module, name) for name in names)


def test_what_plugins_need_is_public() -> None:
    needed = {
        "ActionArguments",
        "ActionError",
        "BarrierFailed",
        "CommandContext",
        "DuplicateTool",
        "InvalidSessionId",
        "JsonLike",
        "Listeners",
        "PluginContext",
        "SessionClosed",
        "SessionLog",
        "SessionNotFound",
        "StorageError",
        "add_store_options",
        "flush_barrier",
        "hookimpl",
    }
    assert needed <= set(dsh.__all__)
    assert {"FakeModel", "FakeClock", "FaultyBackend", "load_plugin", "running_host"} <= set(
        dsh.testing.__all__
    )
