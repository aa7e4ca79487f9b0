"""The README's examples run: the overlay parses, the script loads, the plugin works.

Each example is the fenced block right after a `<!-- readme-example: NAME -->`
marker, so editing the README without keeping its examples true fails here.
"""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any

import anyio
import pytest

from dsh.host import Host
from dsh.models.base import ModelReply
from dsh.models.openai import OpenAISettings, resolve_config
from dsh.models.registry import check_host, validate_settings
from dsh.models.scripted import ScriptedModel, parse_script
from dsh.overlay import parse_overlay
from dsh.persistence.memory import MemoryBackend
from dsh.testing import FakeClock
from dsh.tools import ToolCall

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
_EXAMPLE = re.compile(r"<!-- readme-example: (\w+) -->\n```\w*\n(.*?)```", re.S)
EXAMPLES = dict(_EXAMPLE.findall(README))


def test_the_readme_has_every_example() -> None:
    assert set(EXAMPLES) == {"scripted", "overlay", "plugin", "model"}


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
async def test_the_plugin_example_gives_root_agents_its_tool() -> None:
    module = types.ModuleType("readme_plugin")
    exec(compile(EXAMPLES["plugin"], "README.md", "exec"), module.__dict__)
    plugin_class: Any = module.EchoPlugin
    model = ScriptedModel(
        [
            ModelReply(tool_calls=(ToolCall("c1", "echo", {"text": "hi"}),)),
            ModelReply(text="done"),
        ]
    )
    async with Host(backend=MemoryBackend(), model=model, clock=FakeClock()) as host:
        context = host._plugin_context("echo", plugin_class.Config())
        host.pm.register(plugin_class(context), name="echo")
        agent = await host.create_session()
        assert agent.tools.names() == ["echo"]

        agent.submit("say hi")
        with anyio.fail_after(5):
            while not any(event.type == "turn/end" for event in agent.session.events):
                await agent.when_idle()

        results = [event.data for event in agent.session.events if event.type == "tool/result"]
        assert results == [{"callId": "c1", "name": "echo", "value": {"echo": "hi"}}]
        await context.scope.aclose()  # what unloading the plugin does
        assert agent.tools.names() == []
