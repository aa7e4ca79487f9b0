"""The README's examples run: the overlay parses, the script loads, the plugin works.

Each example is the fenced block right after a `<!-- readme-example: NAME -->`
marker, so editing the README without keeping its examples true fails here.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.models.base import ModelReply
from dsh.models.demo import DemoModel
from dsh.models.openai import OpenAISettings, resolve_config
from dsh.models.registry import check_host, validate_settings
from dsh.models.scripted import parse_script
from dsh.overlay import PluginSpec, parse_overlay
from dsh.session import Session
from dsh.testing import FakeClock, running_host, settled

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
_EXAMPLE = re.compile(r"<!-- readme-example: ([\w-]+) -->\n```\w*\n(.*?)```", re.S)
EXAMPLES = dict(_EXAMPLE.findall(README))


def test_the_readme_has_every_example() -> None:
    assert set(EXAMPLES) == {"scripted", "overlay", "plugin", "plugin-test", "model", "store"}


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "./scripts/test" in README
    assert "exec ./scripts/test" in ci
    assert "./scripts/run" in README


def test_the_overlay_example_parses() -> None:
    overlay = parse_overlay(EXAMPLES["overlay"])

    assert [spec.name for spec in overlay.plugins] == ["tool-schedule", "client-ui-schedule"]
    assert dict(overlay.plugins[0].config) == {"max_segment_seconds": 60}
    assert overlay.host.model == "demo"


def test_the_store_example_sets_the_default_lease_timing() -> None:
    overlay = parse_overlay(EXAMPLES["store"])
    assert overlay.store == parse_overlay("").store
    assert (overlay.store.lease_ttl_seconds, overlay.store.lease_renew_seconds) == (10, 3)


def test_the_model_settings_example_is_valid_and_configures_deepseek_thinking() -> None:
    overlay = parse_overlay(EXAMPLES["model"])
    check_host(overlay.host.model, overlay.host.model_settings)

    settings = validate_settings(overlay.host.model_settings)["openai"]
    assert isinstance(settings, OpenAISettings)
    config = resolve_config(settings, env={"DEEPSEEK_API_KEY": "sk-readme"})

    assert overlay.host.model == "openai"
    assert (config.profile, config.model, config.thinking, config.reasoning_effort) == (
        "deepseek",
        "deepseek-v4-pro",
        "enabled",
        "max",
    )


def test_the_scripted_model_example_loads() -> None:
    replies = parse_script(EXAMPLES["scripted"])

    assert replies[0].tool_calls[0].name == "schedule_create"
    assert replies[1] == ModelReply(text="Done: reminder rem-1 is set.")


@pytest.mark.anyio
async def test_the_plugin_example_and_its_test_pass() -> None:
    module = types.ModuleType("readme_plugin")
    source = EXAMPLES["plugin"] + "\n" + EXAMPLES["plugin-test"]
    exec(compile(source, "README.md", "exec"), module.__dict__)

    await module.test_the_echo_tool_runs_and_unloads()


def test_the_plugin_test_uses_only_public_names() -> None:
    tree = ast.parse(EXAMPLES["plugin"] + "\n" + EXAMPLES["plugin-test"])
    imported = [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    ]
    assert imported == ["pydantic", "dsh", "dsh.testing"]
    assert "._" not in EXAMPLES["plugin-test"] and "host._" not in EXAMPLES["plugin-test"]


def test_the_plugin_example_and_its_test_pass_mypy_strict(tmp_path: Path) -> None:
    example = tmp_path / "readme_plugin.py"
    example.write_text(EXAMPLES["plugin"] + "\n" + EXAMPLES["plugin-test"], encoding="utf-8")

    # From the repository root: the project's mypy settings (strict, pydantic plugin)
    # and its cache apply, so this costs little after `mypy` ran.
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", str(example)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr


_TOUR = re.compile(r"<!-- readme-tour -->\n(.*?)\n\n", re.S)
FAILED = ("[", "Couldn't", "failed", "There is no", "I couldn't", "not enabled", "I can only")


def tour_steps() -> list[str]:
    """What the README's tour asks a person to type, in order (the backticked phrases)."""
    found = _TOUR.search(README)
    assert found is not None, "the README has a <!-- readme-tour --> list"
    return re.findall(r"`([^`]+)`", found[1])


def _turn(session: Session, start: int) -> tuple[list[dict[str, Any]], str]:
    """The tool results and the last answer appended since `start`."""
    results = [e.data for e in session.events[start:] if e.type == "tool/result"]
    answers = [e.data["text"] for e in session.events[start:] if e.type == "message/assistant"]
    return results, answers[-1]  # type: ignore[return-value]


@pytest.mark.anyio
async def test_the_tour_works_step_by_step_with_the_demo_model() -> None:
    steps = tour_steps()
    assert steps[0] == "remind me in 10 seconds to stretch" and len(steps) == 9
    clock = FakeClock()
    plugins = [PluginSpec("tool-schedule"), PluginSpec("client-ui-schedule")]
    async with running_host(model=DemoModel(clock), clock=clock, plugins=plugins) as host:
        agent = await host.create_session()
        answers: list[str] = []
        for text in steps:
            start = len(agent.session)
            agent.submit(text, time_zone="Europe/Berlin")
            await settled(agent)
            results, said = _turn(agent.session, start)
            assert all("error" not in result for result in results), (text, results)
            assert not any(marker in said for marker in FAILED), (text, said)
            answers.append(said)
            if text == steps[0]:  # ten seconds later the reminder fires and is answered
                start = len(agent.session)
                clock.advance(10)
                with anyio.fail_after(5):
                    while not any(e.type == "turn/end" for e in agent.session.events[start:]):
                        await anyio.lowlevel.checkpoint()
                await settled(agent)
                assert _turn(agent.session, start)[1] == "⏰ Reminder: stretch"
        await host.close_session(agent.session.id)

    listed, paused, resumed, moved, cancelled = answers[2:7]
    assert "rem-2" in listed and "rem-1" not in listed
    assert paused.startswith("Reminder rem-2 is paused")
    assert resumed.startswith("Reminder rem-2 is resumed")
    assert "10:00:00 Europe/Berlin" in moved
    assert cancelled == "Deleted reminder rem-2."
    assert answers[7].startswith("已设置提醒 rem-3：2026-01-02 09:00:00 Europe/Berlin")
    assert "仅限本会话" in answers[8] and "每隔2小时" in answers[8]
