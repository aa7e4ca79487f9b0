"""The default tree: installed plugins do nothing until an overlay names them (DESIGN §7).

Both plugin distributions are installed (editable in `.venv`, or from their
wheels in the lane's venv). `dsh web` without `--overlay` must still give
agents no schedule tool and the browser no schedule module; with the
web-schedule overlay both appear. An overlay naming a plugin that is not
installed stops `dsh web` with an error naming the distribution to install.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dsh.plugins.overlay import parse_overlay
from tests.lanes.installs import Install, run
from tests.support.webhost import OVERLAY, WebHost

pytestmark = pytest.mark.lane

SCHEDULE_TOOLS = {"schedule_create", "schedule_update", "schedule_list", "schedule_delete"}


def agent_of_new_session(web: WebHost) -> dict[str, Any]:
    session_id = web.create_session()
    described = web.get(f"/api/sessions/{session_id}").json()
    assert described["live"] is True
    agent: dict[str, Any] = described["agent"]
    return agent


def test_without_an_overlay_installed_plugins_add_no_tool_and_no_client_module(
    install: Install, tmp_path: Path
) -> None:
    installed = run(install.command("plugins"), cwd=tmp_path)
    assert "tool-schedule" in installed and "client-ui-schedule" in installed

    with install.web(tmp_path / "data", overlay=None, model="demo") as web:
        agent = agent_of_new_session(web)
        assert agent["root"] is True
        assert not [tool for tool in agent["tools"] if tool.startswith("schedule_")]
        modules = web.get("/api/client-modules")
        assert modules.status_code == 200
        assert modules.json() == {"modules": []}
        assert web.get("/plugins/client-ui-schedule/schedule-reminder.js").status_code == 404


def test_the_web_schedule_overlay_adds_the_four_tools_and_the_reminder_module(
    install: Install, tmp_path: Path
) -> None:
    with install.web(tmp_path / "data", overlay=OVERLAY, model="demo") as web:
        agent = agent_of_new_session(web)
        assert set(agent["tools"]) >= SCHEDULE_TOOLS
        modules = web.get("/api/client-modules").json()["modules"]
        assert modules == [
            {
                "plugin": "client-ui-schedule",
                "url": "/plugins/client-ui-schedule/schedule-reminder.js",
                "eventTypes": ["schedule/change", "schedule/notice", "schedule/snooze"],
            }
        ]
        served = web.get(modules[0]["url"])
        assert served.status_code == 200
        assert "javascript" in served.headers["content-type"]
        assert "register" in served.text


def test_an_overlay_naming_a_missing_plugin_stops_dsh_web_naming_the_distribution(
    install: Install, tmp_path: Path
) -> None:
    overlay = tmp_path / "overlay.toml"
    overlay.write_text("[plugins.tool-schedule]\n\n[plugins.not-installed]\n", encoding="utf-8")
    done = subprocess.run(
        install.command(
            "web", "--overlay", str(overlay), "--port", "0", "--data-dir", str(tmp_path / "d")
        ),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stdout
    # Checked before the server starts: one clear line, no start-up traceback.
    (last,) = done.stdout.strip().splitlines()
    assert last.startswith("dsh: error:"), done.stdout
    assert "plugin 'not-installed'" in last
    assert "is the distribution that ships it (dsh-not-installed, by convention)" in last


def test_the_overlay_readme_example_enables_both_plugins_with_their_config() -> None:
    readme = (OVERLAY / "README.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"## Write another overlay.*?```toml\n(.*?)```", readme, re.S)
    overlay = parse_overlay(example)
    assert overlay.host.model == "demo"
    tool, ui = overlay.plugins
    assert (tool.name, dict(tool.config), tool.distribution) == (
        "tool-schedule",
        {"max_segment_seconds": 30},
        None,
    )
    assert (ui.name, dict(ui.config), ui.distribution) == (
        "client-ui-schedule",
        {},
        "dsh-client-ui-schedule",
    )
