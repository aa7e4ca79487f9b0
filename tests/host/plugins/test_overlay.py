from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dsh.plugins.overlay
from dsh.base.validation import key_path
from dsh.plugins.errors import OverlayError
from dsh.plugins.overlay import (
    HostSettings,
    Overlay,
    PluginSpec,
    StoreSettings,
    load_overlay,
    parse_overlay,
)

REPOSITORY = Path(__file__).resolve().parents[3]


def write(directory: Path, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "overlay.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problem(text: str, path: Path | None = Path("o/overlay.toml")) -> OverlayError:
    with pytest.raises(OverlayError) as caught:
        parse_overlay(text, path)
    return caught.value


def test_an_overlay_names_plugins_in_file_order_with_their_config_tables(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        [host]
        model = "absent"

        [plugins.zeta]
        greeting = "hello"
        nested = { depth = 2 }

        [plugins.alpha]
        distribution = "acme-alpha"
        """,
    )

    overlay = load_overlay(path)

    assert overlay.path == path
    assert overlay.host == HostSettings(model="absent")
    assert overlay.plugins == (
        PluginSpec("zeta", {"greeting": "hello", "nested": {"depth": 2}}, None, path),
        PluginSpec("alpha", {}, "acme-alpha", path),
    )


def test_the_distribution_key_is_reserved_and_not_passed_to_the_plugin() -> None:
    (spec,) = parse_overlay('[plugins.x]\ndistribution = "dsh-x"\nlevel = 1\n').plugins

    assert spec.distribution == "dsh-x"
    assert dict(spec.config) == {"level": 1}


def test_the_config_given_to_a_plugin_is_read_only() -> None:
    (spec,) = parse_overlay("[plugins.x]\nlevel = 1\n").plugins

    with pytest.raises(TypeError):
        spec.config["level"] = 2  # type: ignore[index]


def test_the_path_may_be_the_overlay_directory(tmp_path: Path) -> None:
    path = write(tmp_path / "overlays" / "mine", "[plugins.one]\n")

    overlay = load_overlay(tmp_path / "overlays" / "mine")

    assert overlay.path == path
    assert [spec.name for spec in overlay.plugins] == ["one"]


def test_an_empty_overlay_enables_nothing_and_leaves_the_model_to_the_host() -> None:
    overlay = parse_overlay("")

    assert overlay == Overlay(path=None, host=HostSettings(model=None), plugins=())


def test_the_default_tree_enables_no_plugin() -> None:
    assert Overlay.default().plugins == ()
    assert Overlay.default().path is None


def test_the_web_schedule_overlay_enables_the_schedule_tool_and_its_renderer() -> None:
    overlay = load_overlay(REPOSITORY / "overlays" / "web-schedule")

    assert [spec.name for spec in overlay.plugins] == ["tool-schedule", "client-ui-schedule"]
    assert all(not spec.config and spec.distribution is None for spec in overlay.plugins)
    assert overlay.host.model == "demo"


# -- errors ---------------------------------------------------------------------


def test_an_unreadable_overlay_names_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "overlay.toml"

    with pytest.raises(OverlayError) as caught:
        load_overlay(missing)

    assert str(caught.value) == (
        f"{missing}: cannot read overlay: there is no such file; pass an overlay file or a "
        "directory holding overlay.toml (such as overlays/web-schedule)"
    )
    assert caught.value.path == missing
    assert isinstance(caught.value.__cause__, FileNotFoundError)


def test_an_overlay_that_is_not_utf8_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "overlay.toml"
    path.write_bytes(b"[plugins.\xff]\n")

    with pytest.raises(OverlayError, match="cannot read overlay"):
        load_overlay(path)


def test_invalid_toml_is_reported_with_its_line_and_column() -> None:
    error = problem('[host]\nmodel = "demo"\n[plugins.x\n')

    assert str(error).startswith("o/overlay.toml: invalid TOML: ")
    assert "line 3" in str(error)
    assert "column" in str(error)
    assert error.problems == ((("", str(error).removeprefix("o/overlay.toml: ")),))


def test_an_unknown_top_level_key_is_an_error_naming_it_and_the_tables_there_are() -> None:
    error = problem('[hots]\nmodel = "demo"\n')

    assert str(error) == (
        "o/overlay.toml: hots: unknown table (did you mean [host]? "
        "an overlay has the tables host, store, plugins)"
    )
    assert error.plugin is None


def test_a_plugin_table_under_a_singular_name_asks_for_plugins() -> None:
    assert str(problem("[plugin.tool-clock]\n")) == (
        "o/overlay.toml: plugin: unknown table (did you mean [plugins]? "
        "an overlay has the tables host, store, plugins)"
    )


def test_an_unknown_host_setting_is_an_error_naming_it() -> None:
    assert str(problem('[host]\nport = 1\nmodel = "demo"\n')) == (
        "o/overlay.toml: host.port: unknown host setting (the host's settings are: model, "
        "wake_cold_sessions, idle_seconds; "
        "a [host.NAME] table holds the settings of model adapter NAME)"
    )


@pytest.mark.parametrize(
    ("text", "location", "plugin"),
    [
        ("[host]\nmodel = 3\n", "host.model", None),
        ("plugins = 3\n", "plugins", None),
        ("[plugins]\ntool = 3\n", "plugins.tool", "tool"),
        ("[plugins.tool]\ndistribution = 3\n", "plugins.tool.distribution", "tool"),
        ('[plugins.tool]\ndistribution = "no spaces"\n', "plugins.tool.distribution", "tool"),
        ('[plugins."bad name"]\n', 'plugins."bad name"', "bad name"),
    ],
)
def test_a_wrong_type_names_the_file_the_plugin_and_the_field(
    text: str, location: str, plugin: str | None
) -> None:
    error = problem(text)

    assert str(error).startswith(f"o/overlay.toml: {location}: ")
    assert error.problems[0][0] == location
    assert error.plugin == plugin


def test_bad_names_get_messages_a_person_can_act_on() -> None:
    error = problem('[plugins."-x"]\n[plugins.y]\ndistribution = "a b"\n')

    assert str(error).splitlines() == [
        "o/overlay.toml: plugins.-x: not a plugin name: expected 1-64 letters, "
        "digits, '.', '_' or '-', starting with a letter or digit",
        "o/overlay.toml: plugins.y.distribution: not a distribution name: expected "
        "letters, digits, '.', '_' or '-', starting and ending with a letter or digit",
    ]


def test_problems_in_several_plugins_are_all_reported_with_no_single_plugin() -> None:
    error = problem("[plugins.a]\ndistribution = 1\n[plugins.b]\ndistribution = 2\n")

    assert [location for location, _ in error.problems] == [
        "plugins.a.distribution",
        "plugins.b.distribution",
    ]
    assert len(str(error).splitlines()) == 2
    assert error.plugin is None


def test_an_overlay_parsed_without_a_path_says_so_in_errors() -> None:
    assert str(problem("oops = 1\n", path=None)) == (
        "<overlay>: oops: unknown table (an overlay has the tables host, store, plugins)"
    )


# -- the model setting ------------------------------------------------------------


@pytest.mark.parametrize("model", ["demo", "absent", "openai"])
def test_the_named_models_are_accepted(model: str) -> None:
    assert parse_overlay(f'[host]\nmodel = "{model}"\n').host.model == model


@pytest.mark.parametrize("model", ["gpt", "gpt:4", "Demo", ""])
def test_the_model_name_is_carried_as_written_for_the_registry_to_check(model: str) -> None:
    # dsh.models.registry.check_host names the unknown model (tests/host/models/test_registry.py).
    assert parse_overlay(f'[host]\nmodel = "{model}"\n').host.model == model


def test_an_adapter_argument_is_left_to_the_adapter() -> None:
    # `scripted:` without a path is rejected when the host builds the adapter.
    overlay = parse_overlay('[host]\nmodel = "scripted:"\n', Path("o/overlay.toml"))

    assert overlay.host.model == "scripted:"


def test_a_relative_scripted_path_is_resolved_against_the_overlay_directory() -> None:
    overlay = parse_overlay('[host]\nmodel = "scripted:replies.json"\n', Path("o/x/overlay.toml"))

    assert overlay.host.model == f"scripted:{Path('o/x/replies.json')}"


def test_an_absolute_scripted_path_is_kept() -> None:
    overlay = parse_overlay(
        '[host]\nmodel = "scripted:/srv/replies.json"\n', Path("o/overlay.toml")
    )

    assert overlay.host.model == "scripted:/srv/replies.json"


def test_a_scripted_path_of_an_overlay_without_a_file_is_kept_as_written() -> None:
    assert parse_overlay('[host]\nmodel = "scripted:r.json"\n').host.model == "scripted:r.json"


def test_key_paths_quote_parts_that_are_not_bare_keys() -> None:
    assert key_path(("plugins", "tool-schedule", 0, "a.b", "c d")) == (
        'plugins.tool-schedule.0."a.b"."c d"'
    )


def test_model_settings_tables_are_carried_as_written_for_their_adapter_to_validate() -> None:
    overlay = parse_overlay(
        '[host]\nmodel = "openai"\n[host.openai]\nbase_url = "http://127.0.0.1:11434/v1"\n'
        'model = "llama3.2"\nread_timeout = 30\nnot_checked_here = true\n'
        "[host.someday]\nx = 1\n"
    )

    assert overlay.host.model == "openai"
    assert {name: dict(table) for name, table in overlay.host.model_settings.items()} == {
        "openai": {
            "base_url": "http://127.0.0.1:11434/v1",
            "model": "llama3.2",
            "read_timeout": 30,
            "not_checked_here": True,
        },
        "someday": {"x": 1},
    }
    with pytest.raises(TypeError):
        overlay.host.model_settings["openai"]["model"] = "other"  # type: ignore[index]


def test_the_overlay_module_imports_no_model_code() -> None:
    tree = ast.parse(Path(dsh.plugins.overlay.__file__).read_text(encoding="utf-8"))
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]

    assert imported
    assert not [name for name in imported if "models" in name.split(".")]


def test_an_overlay_without_model_settings_has_none() -> None:
    assert dict(parse_overlay("[host]\n").host.model_settings) == {}


def test_the_store_table_sets_the_lease_timing_and_defaults_to_ten_and_three_seconds() -> None:
    assert parse_overlay("").store == StoreSettings(lease_ttl_seconds=10, lease_renew_seconds=3)
    overlay = parse_overlay("[store]\nlease_ttl_seconds = 4\nlease_renew_seconds = 1.5\n")
    assert overlay.store == StoreSettings(lease_ttl_seconds=4.0, lease_renew_seconds=1.5)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("lease_ttl_seconds = 0", "store.lease_ttl_seconds: Input should be greater than 0"),
        ("lease_renew_seconds = 7200", "less than or equal to 3600"),
        ("lease_ttl_seconds = '10'", "store.lease_ttl_seconds: Input should be a valid number"),
        ("lease_ttl_seconds = 3", "lease_renew_seconds (3) must be less than lease_ttl_seconds"),
        ("url = 'postgresql://h/db'", "store.url: Extra inputs are not permitted"),
    ],
)
def test_a_bad_store_table_names_the_key(table: str, message: str) -> None:
    with pytest.raises(OverlayError, match=re.escape(message)):
        parse_overlay(f"[store]\n{table}\n")


def test_the_lifecycle_settings_default_to_no_wake_and_five_minutes_idle() -> None:
    host = parse_overlay("").host
    assert host.wake_cold_sessions is False
    assert host.idle_seconds == 300.0


def test_wake_and_idle_seconds_are_read_from_the_host_table() -> None:
    host = parse_overlay("[host]\nwake_cold_sessions = true\nidle_seconds = 2.5\n").host
    assert host.wake_cold_sessions is True
    assert host.idle_seconds == 2.5
    assert parse_overlay("[host]\nidle_seconds = 0\n").host.idle_seconds == 0.0


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[host]\nwake_cold_sessions = 1\n", "host.wake_cold_sessions"),
        ('[host]\nwake_cold_sessions = "yes"\n', "host.wake_cold_sessions"),
        ("[host]\nidle_seconds = -1\n", "host.idle_seconds"),
        ("[host]\nidle_seconds = 86401\n", "host.idle_seconds"),
        ("[host]\nidle_seconds = true\n", "host.idle_seconds"),
        ('[host]\nidle_seconds = "300"\n', "host.idle_seconds"),
    ],
)
def test_bad_lifecycle_settings_are_errors_naming_the_key(text: str, where: str) -> None:
    with pytest.raises(OverlayError) as caught:
        parse_overlay(text)
    assert caught.value.problems[0][0] == where
