from __future__ import annotations

from pathlib import Path

import importlib_metadata
import pytest

from dsh.cli import plugins as plugins_command
from dsh.plugins.loader import InstalledPlugin

from ..fixtures.distributions import PLUGINS, FakeSite
from .conftest import Cli


def rows(out: str) -> dict[str, list[str]]:
    """Table rows by plugin name (the first column)."""
    lines = out.splitlines()
    return {line.split()[0]: line.split() for line in lines[1:]}


def write_overlay(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "overlays" / "test" / "overlay.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_plugins_lists_each_installed_plugin_with_distribution_version_and_target(
    dsh: Cli, site: FakeSite
) -> None:
    site.plugin("recorder", "Recorder", version="2.1")

    result = dsh("plugins")

    assert result.code == 0
    assert result.out.splitlines()[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "TARGET"]
    assert rows(result.out)["recorder"] == [
        "recorder",
        "dsh-recorder",
        "2.1",
        f"{PLUGINS}:Recorder",
    ]
    assert result.err == ""


def test_plugins_imports_no_plugin(dsh: Cli, site: FakeSite) -> None:
    site.install("dsh-ghost", {"ghost": "dsh_fixture_module_that_does_not_exist:Plugin"})

    result = dsh("plugins")

    assert result.code == 0
    assert "ghost" in rows(result.out)


def test_plugins_says_so_when_nothing_is_installed(
    dsh: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plugins_command, "discover_plugins", lambda: ())

    result = dsh("plugins")

    assert result.code == 0
    assert result.out == ""
    assert result.err == "no dsh plugins are installed (entry-point group dsh.plugins)\n"


def test_an_entry_point_without_metadata_is_listed_with_question_marks(
    dsh: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    loose = importlib_metadata.EntryPoint("loose", "somewhere:Plugin", "dsh.plugins")
    monkeypatch.setattr(
        plugins_command, "discover_plugins", lambda: (InstalledPlugin.from_entry_point(loose),)
    )

    result = dsh("plugins")

    assert rows(result.out)["loose"] == ["loose", "?", "?", "somewhere:Plugin"]


def test_with_an_overlay_plugins_marks_which_installed_plugins_it_enables(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("recorder", "Recorder")
    site.plugin("unused", "Recorder")
    overlay = write_overlay(tmp_path, "[plugins.recorder]\n")

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 0
    assert result.out.splitlines()[0].split()[-1] == "ENABLED"
    assert rows(result.out)["recorder"][-1] == "yes"
    assert rows(result.out)["unused"][-1] == "no"
    assert result.err == ""


def test_an_overlay_naming_a_missing_plugin_fails_naming_the_distribution_to_install(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("recorder", "Recorder")
    overlay = write_overlay(tmp_path, "[plugins.recorder]\n[plugins.tool-nothing]\n")

    result = dsh("plugins", "--overlay", str(overlay.parent))

    assert result.code == 1
    assert rows(result.out)["recorder"][-1] == "yes"
    assert rows(result.out)["tool-nothing"] == ["tool-nothing", "-", "-", "-", "missing"]
    assert result.err == (
        f"dsh: error: plugin 'tool-nothing' named in {overlay} is not installed; "
        "install the distribution dsh-tool-nothing (pip install dsh-tool-nothing)\n"
    )


def test_an_overlay_naming_an_ambiguous_plugin_fails_and_says_so(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.install("dsh-twin", {"twin": f"{PLUGINS}:Recorder"})
    site.install("acme-twin", {"twin": f"{PLUGINS}:Recorder"})
    overlay = write_overlay(tmp_path, "[plugins.twin]\n")

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 1
    twins = [line.split() for line in result.out.splitlines() if line.startswith("twin ")]
    assert [row[-1] for row in twins] == ["ambiguous", "ambiguous"]
    assert "provided by several distributions" in result.err


def test_an_invalid_overlay_fails_naming_the_file_and_key(dsh: Cli, tmp_path: Path) -> None:
    overlay = write_overlay(tmp_path, "[plugins.x]\ndistribution = 3\n")

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 1
    assert result.out == ""
    assert result.err.startswith(f"dsh: error: {overlay}: plugins.x.distribution: ")


def test_an_overlay_that_does_not_exist_fails(dsh: Cli, tmp_path: Path) -> None:
    result = dsh("plugins", "--overlay", str(tmp_path / "nowhere"))

    assert result.code == 1
    assert "cannot read overlay" in result.err


def test_with_an_overlay_plugins_shows_its_lifecycle_host_settings(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("recorder", "Recorder")
    overlay = write_overlay(
        tmp_path, "[host]\nwake_cold_sessions = true\nidle_seconds = 30\n[plugins.recorder]\n"
    )

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 0
    assert result.out.splitlines()[-1] == (
        "host settings: wake_cold_sessions = true, idle_seconds = 30"
    )


def test_the_default_lifecycle_settings_are_shown_and_zero_idle_is_named(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    plain = write_overlay(tmp_path, "")
    assert dsh("plugins", "--overlay", str(plain)).out.splitlines()[-1] == (
        "host settings: wake_cold_sessions = false, idle_seconds = 300"
    )
    never = tmp_path / "never.toml"
    never.write_text("[host]\nidle_seconds = 0\n", encoding="utf-8")
    assert dsh("plugins", "--overlay", str(never)).out.splitlines()[-1] == (
        "host settings: wake_cold_sessions = false, idle_seconds = 0 (never hibernate)"
    )


def test_plugins_and_web_refuse_a_bad_plugin_config_with_the_same_one_line_errors(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("configured", "Configured")
    site.plugin("recorder", "Recorder")
    site.install("dsh-ghost", {"ghost": "dsh_fixture_module_that_does_not_exist:Plugin"})
    overlay = write_overlay(
        tmp_path,
        '[plugins.configured]\ngreeting = "hi"\nretries = "three"\n'
        "[plugins.recorder]\n[plugins.ghost]\n",
    )

    listed = dsh("plugins", "--overlay", str(overlay))
    served = dsh("web", "--overlay", str(overlay), "--data-dir", str(tmp_path / "data"))

    assert listed.code == served.code == 1
    assert [rows(listed.out)[name][-1] for name in ("configured", "recorder", "ghost")] == [
        "error",
        "yes",
        "error",
    ]
    problems = listed.err.splitlines()
    assert problems == served.err.splitlines()  # the same checks, the same words
    assert problems[0] == (
        f"dsh: error: {overlay}: invalid config for plugin 'configured': "
        "plugins.configured.retries: Input should be a valid integer"
    )
    assert problems[1].startswith("dsh: error: cannot import plugin 'ghost' (dsh-ghost 1.0, ")
    assert "ModuleNotFoundError" in problems[1]
    assert len(problems) == 2 and "Traceback" not in served.err
    assert served.out == "" and not (tmp_path / "data").exists()  # refused before starting


def test_plugins_with_a_valid_config_marks_it_enabled(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("configured", "Configured")
    overlay = write_overlay(tmp_path, '[plugins.configured]\ngreeting = "hi"\n')

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 0 and rows(result.out)["configured"][-1] == "yes"
