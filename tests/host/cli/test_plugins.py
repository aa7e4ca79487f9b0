from __future__ import annotations

from pathlib import Path

import importlib_metadata
import pytest

from dsh.cli import plugins as plugins_command
from dsh.plugins.loader import InstalledPlugin
from dsh.plugins.overlay import load_overlay
from dsh.web import launch

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
        f"dsh: error: plugin 'tool-nothing' named in {overlay} is not installed; is the "
        "distribution that ships it (dsh-tool-nothing, by convention) installed in this "
        "environment?\n"
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


REFUSALS = {
    "unknown hook": (
        {"misspelled": "MisspelledHook"},
        "[plugins.misspelled]\n",
        "implements hooks that dsh does not define: dsh_agent_publishd",
    ),
    "not a plugin class": (
        {"notaplugin": "NotAPlugin"},
        "[plugins.notaplugin]\n",
        "plugin 'notaplugin' (dsh-notaplugin 1.0) failed to start: TypeError",
    ),
    "not a class": (
        {"function": "not_a_class"},
        "[plugins.function]\n",
        "must name a class, not function",
    ),
    "bad config": (
        {"configured": "Configured"},
        '[plugins.configured]\ngreeting = "hi"\nretries = "three"\n',
        "plugins.configured.retries: Input should be a valid integer",
    ),
    "missing distribution": (
        {},
        "[plugins.nothing-here]\n",
        "plugin 'nothing-here' named in",
    ),
    "duplicate tool": (
        {"one-clock": "OneClock", "another-clock": "AnotherClock"},
        "[plugins.one-clock]\n[plugins.another-clock]\n",
        # Hooks run the plugin loaded last first: `one-clock`'s registration is the one
        # a running Host would see fail.
        "plugin 'one-clock' registers a tool named 'clock_now', which plugin "
        "'another-clock' registers too",
    ),
}


@pytest.mark.parametrize("refusal", REFUSALS)
def test_plugins_and_web_refuse_the_same_overlays_with_the_same_words(
    dsh: Cli, site: FakeSite, tmp_path: Path, refusal: str
) -> None:
    plugins, table, expected = REFUSALS[refusal]
    for name, cls in plugins.items():
        site.plugin(name, cls)
    overlay = write_overlay(tmp_path, table)

    listed = dsh("plugins", "--overlay", str(overlay))
    served = dsh("web", "--overlay", str(overlay), "--data-dir", str(tmp_path / "data"))

    assert listed.code == served.code == 1
    assert listed.err == served.err  # one check, two commands
    (line,) = listed.err.splitlines()
    assert line.startswith("dsh: error: ") and expected in line
    assert served.out == "" and not (tmp_path / "data").exists()  # refused before starting


def test_every_refusal_the_trial_load_finds_names_the_plugin_in_the_table(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("one-clock", "OneClock")
    site.plugin("another-clock", "AnotherClock")
    overlay = write_overlay(tmp_path, "[plugins.one-clock]\n[plugins.another-clock]\n")

    result = dsh("plugins", "--overlay", str(overlay))

    assert rows(result.out)["one-clock"][-1] == "error"
    assert rows(result.out)["another-clock"][-1] == "yes"


def test_a_name_close_to_an_installed_plugin_asks_did_you_mean_in_both_commands(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("tool-clock", "OneClock", version="0.2")
    overlay = write_overlay(tmp_path, "[plugins.tool-clok]\n")

    listed = dsh("plugins", "--overlay", str(overlay))
    served = dsh("web", "--overlay", str(overlay), "--data-dir", str(tmp_path / "data"))

    assert (
        listed.err
        == served.err
        == (
            f"dsh: error: plugin 'tool-clok' named in {overlay} is not installed; "
            "did you mean 'tool-clock' (installed from dsh-tool-clock 0.2)?\n"
        )
    )
    assert "pip" not in listed.err


def test_a_plugin_that_implements_no_hook_is_a_warning_naming_it(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("configured", "Configured")
    overlay = write_overlay(tmp_path, '[plugins.configured]\ngreeting = "hi"\n')

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 0 and rows(result.out)["configured"][-1] == "yes"
    assert result.err == (
        "warning: plugin 'configured' (dsh-configured 1.0) implements no dsh hook, so it "
        "contributes nothing; mark its hook methods with @dsh.hookimpl\n"
    )


def test_a_class_that_is_no_plugin_with_a_config_table_is_told_what_it_is(
    dsh: Cli, site: FakeSite, tmp_path: Path
) -> None:
    site.plugin("notaplugin", "NotAPlugin")
    overlay = write_overlay(tmp_path, "[plugins.notaplugin]\nlevel = 3\n")

    result = dsh("plugins", "--overlay", str(overlay))

    assert result.code == 1
    assert result.err == (
        f"dsh: error: {overlay}: plugin 'notaplugin' (dsh-notaplugin 1.0) names class "
        "tests.host.fixtures.plugins.NotAPlugin, which is not a dsh plugin: it implements "
        "no dsh hook and has no Config, so nothing reads plugins.notaplugin.level; does the "
        "entry point name the right class?\n"
    )


def test_dsh_web_gets_the_same_warnings_to_log(site: FakeSite, tmp_path: Path) -> None:
    site.plugin("configured", "Configured")
    site.plugin("recorder", "Recorder")
    overlay = load_overlay(
        write_overlay(tmp_path, '[plugins.configured]\ngreeting = "hi"\n[plugins.recorder]\n')
    )

    assert launch.check_plugins(overlay) == (
        "plugin 'configured' (dsh-configured 1.0) implements no dsh hook, so it contributes "
        "nothing; mark its hook methods with @dsh.hookimpl",
    )
