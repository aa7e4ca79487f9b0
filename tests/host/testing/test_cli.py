"""`dsh.testing.run_cli` / `arun_cli`: `dsh` and a plugin's commands, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh.testing import CliResult, arun_cli, run_cli

from ..fixtures.distributions import FakeSite


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeSite:
    return FakeSite(tmp_path / "site", monkeypatch)


def test_a_plugin_command_runs_with_its_plugin_enabled_and_output_captured(
    site: FakeSite,
) -> None:
    site.plugin("greeter", "Commands")

    assert run_cli("hello", "--name", "Ada", plugins=["greeter"]) == CliResult(
        0, "hello Ada from greeter\n", ""
    )
    assert run_cli("hello", "--name", "three", plugins={"greeter": {}}).code == 3


def test_without_plugins_a_plugin_command_is_unknown(site: FakeSite) -> None:
    site.plugin("greeter", "Commands")

    result = run_cli("hello")

    assert result.code == 2 and "greeter" in result.err


def test_config_tables_are_written_as_toml_and_refused_values_say_so(site: FakeSite) -> None:
    site.plugin("configured", "Configured")

    result = run_cli("plugins", "--help", plugins={"configured": {"greeting": "hi", "retries": 2}})
    assert result.code == 0
    with pytest.raises(TypeError, match="only strings, numbers and booleans"):
        run_cli("plugins", plugins={"configured": {"greeting": ["a"]}})


def test_a_bad_config_value_is_the_loaders_error(site: FakeSite) -> None:
    site.plugin("configured", "Configured")

    result = run_cli("hello", plugins={"configured": {"greeting": True, "odd key": 1.5}})

    assert result.code == 1
    assert "plugins.configured.greeting" in result.err
    assert 'plugins.configured."odd key"' in result.err


@pytest.mark.anyio
async def test_an_async_test_runs_a_command_in_a_worker_thread(site: FakeSite) -> None:
    site.plugin("greeter", "Commands")

    result = await arun_cli("hello", plugins=["greeter"])

    assert result == CliResult(0, "hello world from greeter\n", "")
