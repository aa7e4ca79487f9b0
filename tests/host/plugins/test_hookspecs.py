"""The hook specifications: named, documented, never historic, and each one tested."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pluggy
import pytest

from dsh.plugins import hookspecs

TESTS = Path(__file__).resolve().parents[2]


def specs() -> list[tuple[str, object]]:
    return [
        (name, function)
        for name, function in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(function, f"{hookspecs.PROJECT}_spec")
    ]


def test_there_are_the_fifteen_documented_hooks() -> None:
    assert [name for name, _ in specs()] == [
        "dsh_agent_published",
        "dsh_cli_commands",
        "dsh_client_modules",
        "dsh_demo_skills",
        "dsh_event_view",
        "dsh_health",
        "dsh_models",
        "dsh_session_action",
        "dsh_session_alert",
        "dsh_session_check",
        "dsh_session_state",
        "dsh_session_summary",
        "dsh_session_wake_at",
        "dsh_store_copy",
        "dsh_web_routes",
    ]


@pytest.mark.parametrize(("name", "function"), specs())
def test_every_hook_says_whether_one_failing_plugin_can_hide_the_others(
    name: str, function: object
) -> None:
    doc = " ".join((inspect.getdoc(function) or "").split())
    assert "Failures are contained per plugin" in doc or "its failures are not contained" in doc


@pytest.mark.parametrize(("name", "function"), specs())
def test_every_hook_is_prefixed_typed_and_documented(name: str, function: object) -> None:
    assert name.startswith("dsh_")
    doc = inspect.getdoc(function) or ""
    assert "Called" in doc, f"{name} must say when it is called"
    assert "eturn" in doc, f"{name} must say what to return"
    signature = inspect.signature(function)  # type: ignore[arg-type]
    assert all(p.annotation is not inspect.Parameter.empty for p in signature.parameters.values())


@pytest.mark.parametrize(("name", "function"), specs())
def test_no_hook_is_historic_and_firstresult_hooks_say_so(name: str, function: object) -> None:
    options = getattr(function, f"{hookspecs.PROJECT}_spec")
    assert not options["historic"], "publication must not replay the past to late plugins"
    if options["firstresult"]:
        assert "Stop at first non-None result" in " ".join((inspect.getdoc(function) or "").split())


def test_every_hook_has_a_test_that_calls_or_implements_it() -> None:
    sources = [
        path.read_text(encoding="utf-8")
        for path in TESTS.rglob("test_*.py")
        if path.name != Path(__file__).name
    ]
    for name, _ in specs():
        pattern = re.compile(rf"def {name}\(|hook\.{name}\(")
        assert any(pattern.search(source) for source in sources), f"no test exercises {name}"


def test_the_specs_register_with_a_plugin_manager() -> None:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)

    assert {name for name, _ in specs()} <= set(dir(manager.hook))
