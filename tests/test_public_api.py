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
        "MissingPlugin",
        "PluginConfigError",
        "PluginLoadError",
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
    assert {
        "FakeModel",
        "FakeClock",
        "FaultyBackend",
        "load_plugin",
        "running_host",
        "plugin_host",
        "run_cli",
        "arun_cli",
        "StrictModeError",
        "web_client",
    } <= set(dsh.testing.__all__)


def test_names_the_third_edition_renamed_still_work_and_say_what_replaces_them() -> None:
    with pytest.warns(DeprecationWarning, match=r"dsh\.SessionStore .*use dsh\.LiveSessions"):
        assert dsh.SessionStore is dsh.LiveSessions  # type: ignore[attr-defined]
    with pytest.warns(DeprecationWarning, match=r"use dsh\.testing\.MemoryWakeBackend"):
        assert dsh.testing.MemoryWakeStore is dsh.testing.MemoryWakeBackend  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'SessionShop'"):
        dsh.SessionShop  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        dsh.testing.Nothing  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.anyio
async def test_agent_tool_and_plugin_contexts_still_answer_to_store() -> None:
    seen: list[dsh.PluginContext[None]] = []

    class Remembers:
        def __init__(self, context: dsh.PluginContext[None]) -> None:
            seen.append(context)

    async with dsh.testing.running_host() as host:
        await dsh.testing.load_plugin(host, Remembers)
        agent = await host.create_session()
        context = dsh.ToolContext(
            agent=agent, session=agent.session, live=agent.live, clock=host.clock
        )
        for holder, name in (
            (agent, "Agent"),
            (context, "ToolContext"),
            (seen[0], "PluginContext"),
        ):
            with pytest.warns(DeprecationWarning, match=rf"{name}\.store .*use {name}\.live"):
                assert holder.store is host.live


@pytest.mark.anyio
async def test_running_host_takes_the_wake_backend_under_its_second_edition_name() -> None:
    wake = dsh.testing.MemoryWakeBackend()
    with pytest.warns(DeprecationWarning, match=r"wake_store=.*use running_host\(wake_backend"):
        async with dsh.testing.running_host(wake_store=wake) as host:
            assert host.lifecycle.wakes
