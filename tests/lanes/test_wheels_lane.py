"""The built-wheels lane: the four distributions install from their wheels, separately.

The wheels are built from this checkout and installed into a fresh virtual
environment (the `wheels_install` fixture); the restart lane and the
default-tree test then run `<venv>/bin/dsh` (their `install` fixture). This
file checks the installation itself: four separate distributions, each
shipping only its own package and data, with their entry points discoverable
and nothing imported from the checkout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.lanes.installs import DISTRIBUTIONS, Install, run
from tests.support.webhost import OVERLAY, REPO

pytestmark = pytest.mark.lane

# dsh.testing's pytest plugin ships beside `dsh`, so that pytest loading it imports no dsh.
ALSO_SHIPPED = {"dsh-host": ("_dsh_pytest",)}

PACKAGES = {
    "dsh-host": "dsh",
    "dsh-tool-schedule": "dsh_tool_schedule",
    "dsh-client-ui-schedule": "dsh_client_ui_schedule",
    "dsh-notify": "dsh_notify",
}

# Runs in the venv's interpreter: what importlib.metadata says about each
# distribution, where each package is imported from, and the plugin entry points.
PROBE = """
import importlib, importlib.metadata as metadata, json, sys
report = {"distributions": {}, "modules": {}, "entryPoints": []}
for name, package in %(packages)r.items():
    dist = metadata.distribution(name)
    report["distributions"][name] = {
        "name": dist.metadata["Name"],
        "version": dist.version,
        "requires": dist.requires or [],
        "directUrl": dist.read_text("direct_url.json"),
        "topLevel": sorted({str(f).split("/")[0] for f in dist.files or []}),
        "files": sorted(str(f) for f in dist.files or []),
    }
    report["modules"][package] = importlib.import_module(package).__file__
for entry in metadata.entry_points(group="dsh.plugins"):
    report["entryPoints"].append(
        {"name": entry.name, "value": entry.value, "distribution": entry.dist.name}
    )
report["prefix"] = sys.prefix
print(json.dumps(report))
"""


def probe(install: Install, cwd: Path) -> dict[str, Any]:
    report: dict[str, Any] = install.probe(PROBE % {"packages": PACKAGES}, cwd=cwd)
    return report


def test_four_wheels_are_built_one_per_distribution(wheels_install: Install) -> None:
    names = sorted(wheel.name for wheel in wheels_install.wheels)
    assert names == [
        "dsh_client_ui_schedule-0.1.0-py3-none-any.whl",
        "dsh_host-0.1.0-py3-none-any.whl",
        "dsh_notify-0.1.0-py3-none-any.whl",
        "dsh_tool_schedule-0.1.0-py3-none-any.whl",
    ]
    assert set(DISTRIBUTIONS) == set(PACKAGES)


def test_each_distribution_installs_separately_from_its_wheel(
    wheels_install: Install, tmp_path: Path
) -> None:
    report = probe(wheels_install, tmp_path)
    prefix = Path(report["prefix"]).resolve()
    assert prefix != REPO and REPO not in prefix.parents
    for name, package in PACKAGES.items():
        dist = report["distributions"][name]
        assert dist["name"] == name
        assert dist["version"] == "0.1.0"
        # Installed from the built wheel, not an editable checkout.
        assert '"archive_info"' in dist["directUrl"]
        assert dist["directUrl"].rstrip().endswith('.whl"}')
        own = {top for top in dist["topLevel"] if not top.endswith(".dist-info")}
        expected = {package, *ALSO_SHIPPED.get(name, ())}
        assert own - {"..", "__pycache__"} == expected, (name, dist["topLevel"])
        module = Path(report["modules"][package]).resolve()
        assert prefix in module.parents, f"{package} imported from {module}"
    # The plugins depend on the host; the host does not depend on them.
    host_requires = report["distributions"]["dsh-host"]["requires"]
    assert not any(req.startswith("dsh-") for req in host_requires)
    for plugin in ("dsh-tool-schedule", "dsh-client-ui-schedule", "dsh-notify"):
        assert any(
            req.startswith("dsh-host") for req in report["distributions"][plugin]["requires"]
        )
    # The browser module ships as package data of the UI distribution.
    ui_files = report["distributions"]["dsh-client-ui-schedule"]["files"]
    assert "dsh_client_ui_schedule/static/schedule-reminder.js" in ui_files
    host_files = report["distributions"]["dsh-host"]["files"]
    assert "dsh/web/static/index.html" in host_files


def test_the_plugin_entry_points_are_discoverable_from_their_own_distributions(
    wheels_install: Install, tmp_path: Path
) -> None:
    report = probe(wheels_install, tmp_path)
    assert sorted(report["entryPoints"], key=lambda entry: entry["name"]) == [
        {
            "name": "client-ui-schedule",
            "value": "dsh_client_ui_schedule.plugin:ScheduleUiPlugin",
            "distribution": "dsh-client-ui-schedule",
        },
        {
            "name": "notify",
            "value": "dsh_notify.plugin:NotifyPlugin",
            "distribution": "dsh-notify",
        },
        {
            "name": "tool-schedule",
            "value": "dsh_tool_schedule.plugin:SchedulePlugin",
            "distribution": "dsh-tool-schedule",
        },
    ]


def test_dsh_plugins_in_the_venv_reports_both_plugins_enabled_by_the_overlay(
    wheels_install: Install, tmp_path: Path
) -> None:
    output = run(wheels_install.command("plugins", "--overlay", str(OVERLAY)), cwd=tmp_path)
    rows = {line.split()[0]: line.split() for line in output.splitlines()[1:] if line.strip()}
    assert rows["tool-schedule"][1:3] == ["dsh-tool-schedule", "0.1.0"]
    assert rows["tool-schedule"][-1] == "yes"
    assert rows["client-ui-schedule"][1:3] == ["dsh-client-ui-schedule", "0.1.0"]
    assert rows["client-ui-schedule"][-1] == "yes"
