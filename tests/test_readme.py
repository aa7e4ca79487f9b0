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

import pytest

from dsh.models.base import ModelReply
from dsh.models.openai import OpenAISettings, resolve_config
from dsh.models.registry import check_host, validate_settings
from dsh.models.scripted import parse_script
from dsh.overlay import parse_overlay

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
_EXAMPLE = re.compile(r"<!-- readme-example: ([\w-]+) -->\n```\w*\n(.*?)```", re.S)
EXAMPLES = dict(_EXAMPLE.findall(README))


def test_the_readme_has_every_example() -> None:
    assert set(EXAMPLES) == {"scripted", "overlay", "plugin", "plugin-test", "model"}


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
