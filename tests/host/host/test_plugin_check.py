"""The one check of an overlay's plugins: the loader's checks, then a trial load."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.host.plugin_check import check_plugins
from dsh.plugins.loader import PluginSpec

from ..fixtures.distributions import FakeSite


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSite:
    return FakeSite(tmp_path / "site", monkeypatch)


def test_plugins_that_pass_are_loaded_once_and_reported_without_problems(site: FakeSite) -> None:
    site.plugin("recorder", "Recorder")
    site.plugin("one-clock", "OneClock")

    checks = check_plugins([PluginSpec("recorder"), PluginSpec("one-clock")])

    assert [(check.spec.name, check.problem, check.warnings) for check in checks] == [
        ("recorder", None, ()),
        ("one-clock", None, ()),
    ]


def test_a_plugin_registering_one_tool_name_twice_is_refused_saying_so(site: FakeSite) -> None:
    site.plugin("two-clocks", "TwoClocks")

    (check,) = check_plugins([PluginSpec("two-clocks")])

    assert str(check.problem) == (
        "plugin 'two-clocks' registers a tool named 'clock_now' twice: "
        "an agent's tool names are unique"
    )


def test_a_hook_that_fails_otherwise_is_not_refused_as_a_running_host_contains_it(
    site: FakeSite,
) -> None:
    site.plugin("fails", "PublishFails")
    site.plugin("one-clock", "OneClock")

    checks = check_plugins([PluginSpec("fails"), PluginSpec("one-clock")])

    assert [check.problem for check in checks] == [None, None]


def test_nothing_to_load_starts_no_trial_host(site: FakeSite) -> None:
    (check,) = check_plugins([PluginSpec("gone")])

    assert check.plugin is None and check.problem is not None
