from __future__ import annotations

import sys

import importlib_metadata
import pytest

from dsh.plugins.errors import AmbiguousPlugin, MissingPlugin
from dsh.plugins.loader import (
    InstalledPlugin,
    conventional_distribution,
    discover_plugins,
    missing_plugins,
    resolve_plugins,
)
from dsh.plugins.overlay import PluginSpec
from tests.host.fixtures.distributions import PLUGINS, FakeSite


def test_discovery_reports_name_distribution_version_and_target(site: FakeSite) -> None:
    site.install("dsh-recorder", {"recorder": f"{PLUGINS}:Recorder"}, version="2.5")

    found = {plugin.name: plugin for plugin in discover_plugins()}

    plugin = found["recorder"]
    assert (plugin.distribution, plugin.version, plugin.target) == (
        "dsh-recorder",
        "2.5",
        f"{PLUGINS}:Recorder",
    )
    assert plugin.label == "dsh-recorder 2.5"


def test_discovery_imports_nothing(site: FakeSite) -> None:
    site.install("dsh-ghost", {"ghost": "dsh_fixture_module_that_does_not_exist:Plugin"})

    names = [plugin.name for plugin in discover_plugins()]

    assert "ghost" in names
    assert "dsh_fixture_module_that_does_not_exist" not in sys.modules


def test_an_entry_point_without_metadata_reports_an_unknown_distribution() -> None:
    entry_point = importlib_metadata.EntryPoint("loose", "somewhere:Plugin", "dsh.plugins")

    plugin = InstalledPlugin.from_entry_point(entry_point)

    assert (plugin.distribution, plugin.version) == (None, None)
    assert plugin.label == "an unknown distribution"


def test_the_conventional_distribution_of_plugin_x_is_dsh_x() -> None:
    assert conventional_distribution("tool-schedule") == "dsh-tool-schedule"


def test_resolution_pairs_specs_with_entry_points_in_spec_order(site: FakeSite) -> None:
    site.plugin("beta", "Recorder")
    site.plugin("alpha", "Recorder")
    installed = discover_plugins()

    pairs = resolve_plugins(
        [PluginSpec("beta"), PluginSpec("gone"), PluginSpec("alpha")], installed
    )

    assert [(spec.name, plugin and plugin.distribution) for spec, plugin in pairs] == [
        ("beta", "dsh-beta"),
        ("gone", None),
        ("alpha", "dsh-alpha"),
    ]
    error = missing_plugins(pairs, installed)
    assert isinstance(error, MissingPlugin)
    assert error.missing == (("gone", "dsh-gone"),)


def test_a_distribution_pin_matches_names_normalized_as_pep_503(site: FakeSite) -> None:
    site.install("Acme.Tools", {"tools": f"{PLUGINS}:Recorder"})

    ((_, plugin),) = resolve_plugins(
        [PluginSpec("tools", distribution="acme_tools")], discover_plugins()
    )

    assert plugin is not None
    assert plugin.distribution == "Acme.Tools"


def test_nothing_is_missing_when_every_spec_resolved(site: FakeSite) -> None:
    site.plugin("alpha", "Recorder")
    installed = discover_plugins()

    assert missing_plugins(resolve_plugins([PluginSpec("alpha")], installed), installed) is None


def test_several_distributions_for_one_name_are_ambiguous(site: FakeSite) -> None:
    site.install("dsh-twin", {"twin": f"{PLUGINS}:Recorder"})
    site.install("acme-twin", {"twin": f"{PLUGINS}:Recorder"})

    with pytest.raises(AmbiguousPlugin) as caught:
        resolve_plugins([PluginSpec("twin")], discover_plugins())

    assert caught.value.plugin == "twin"
