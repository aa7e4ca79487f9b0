from __future__ import annotations

import argparse
import io
import runpy
import sys
from pathlib import Path

import pytest

from dsh.base.version import VERSION
from dsh.base.width import display_width
from dsh.cli import COMMANDS, main
from dsh.cli.app import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    Command,
    Streams,
    add_model_option,
    add_overlay_option,
    command_word,
    data_dir_of,
    default_data_dir,
    environment_overlay,
    model_of,
    overlay_of,
    trailing_overlay,
)
from dsh.cli.dispatch import dispatch
from dsh.cli.errors import CommandError
from dsh.plugins.overlay import Overlay, parse_overlay

from .conftest import Cli


def command(name: str, behaviour: BaseException | int) -> Command:
    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--flag", action="store_true")

        def run(args: argparse.Namespace, streams: Streams) -> int:
            streams.line(f"{name} ran, flag={args.flag}")
            if isinstance(behaviour, BaseException):
                raise behaviour
            return behaviour

        parser.set_defaults(run=run)

    return Command(name=name, help=f"the {name} command", configure=configure)


def run(commands: list[Command], *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = dispatch(commands, list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_help_lists_every_registered_command_on_stdout(dsh: Cli) -> None:
    result = dsh("--help")

    assert result.code == 0
    assert result.out.startswith("usage: dsh ")
    for registered in COMMANDS:
        assert registered.name in result.out
    assert result.err == ""


@pytest.mark.parametrize(
    "argv", [("plugins", "--help"), ("sessions", "--help"), ("sessions", "list", "--help")]
)
def test_every_command_has_help(dsh: Cli, argv: tuple[str, ...]) -> None:
    result = dsh(*argv)

    assert result.code == 0
    assert result.out.startswith(f"usage: dsh {' '.join(argv[:-1])}")


def test_dsh_alone_prints_its_help(dsh: Cli) -> None:
    result = dsh()

    assert result.code == 0
    assert result.out == dsh("--help").out
    assert result.err == ""


def test_a_command_group_alone_prints_its_help(dsh: Cli) -> None:
    result = dsh("sessions")

    assert result.code == 0
    assert result.out == dsh("sessions", "--help").out
    assert "restore" in result.out and result.err == ""


def test_an_unknown_command_is_a_one_line_usage_error_naming_the_known_ones(dsh: Cli) -> None:
    result = dsh("serve")

    assert result.code == EXIT_USAGE
    assert result.out == ""
    assert result.err == (
        "dsh: error: unknown command 'serve'; choose one of web, plugins, plugin, sessions, store, "
        "index (see 'dsh --help')\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("sessions", "frob"), "dsh sessions: error: unknown action 'frob'; choose one of list"),
        (("sessions", "show"), "dsh sessions show: error: the following arguments are required"),
        (("plugins", "--nope"), "dsh: error: unrecognized arguments: --nope"),
        (("web", "--port", "99999"), "dsh web: error: argument --port: '99999' is not a port"),
        (("web", "--port", "http"), "dsh web: error: argument --port: 'http' is not a port"),
    ],
)
def test_every_usage_error_is_one_line_saying_where_the_options_are(
    dsh: Cli, argv: tuple[str, ...], message: str
) -> None:
    result = dsh(*argv)

    assert result.code == EXIT_USAGE
    assert result.err.startswith(message)
    assert result.err.count("\n") == 1 and result.err.rstrip().endswith("--help')")


@pytest.mark.parametrize(
    ("argv", "word", "overlay"),
    [
        ([], None, None),
        (["--overlay", "a", "reminders", "list"], "reminders", "a"),
        (["--overlay=b", "-v", "web"], "web", "b"),
        (["--", "reminders"], "reminders", None),
        (["--", "--"], None, None),
        (["--"], None, None),
        (["--overlay"], None, None),
    ],
)
def test_the_command_word_is_the_first_word_after_the_global_options(
    argv: list[str], word: str | None, overlay: str | None
) -> None:
    assert command_word(argv) == (word, None if overlay is None else Path(overlay))


@pytest.mark.parametrize(
    ("argv", "kept", "overlay"),
    [
        (["--overlay"], ["--overlay"], None),
        (["reminders", "list", "--overlay", "o", "--json"], ["reminders", "list", "--json"], "o"),
        (["reminders", "--overlay=a", "--overlay", "b"], ["reminders"], "b"),
        (["reminders", "--", "--overlay", "o"], ["reminders", "--", "--overlay", "o"], None),
        (["reminders", "list", "--overlay"], ["reminders", "list", "--overlay"], None),
    ],
)
def test_an_overlay_after_the_command_word_is_taken_out(
    argv: list[str], kept: list[str], overlay: str | None
) -> None:
    assert trailing_overlay(argv) == (kept, None if overlay is None else Path(overlay))


def test_dsh_overlay_names_the_overlay_when_set_and_not_empty() -> None:
    assert environment_overlay({"DSH_OVERLAY": "overlays/web-schedule"}) == Path(
        "overlays/web-schedule"
    )
    assert environment_overlay({"DSH_OVERLAY": ""}) is None
    assert environment_overlay({}) is None


def test_a_registered_command_is_parsed_and_run_with_its_exit_code() -> None:
    code, out, err = run([command("alpha", 0), command("beta", 7)], "beta", "--flag")

    assert (code, out, err) == (7, "beta ran, flag=True\n", "")


def test_an_expected_failure_is_one_message_on_stderr_with_its_code() -> None:
    failing = command("alpha", CommandError("it went wrong", code=EXIT_USAGE))

    code, out, err = run([failing], "alpha")

    assert code == EXIT_USAGE
    assert out == "alpha ran, flag=False\n"
    assert err == "dsh: error: it went wrong\n"


def test_several_problems_are_one_error_line_each() -> None:
    failing = command("alpha", CommandError("one\ntwo", problems=["one", "two"]))

    code, _, err = run([failing], "alpha")

    assert (code, err) == (EXIT_FAILURE, "dsh: error: one\ndsh: error: two\n")


def test_a_command_error_fails_with_exit_1_by_default() -> None:
    code, _, err = run([command("alpha", CommandError("nope"))], "alpha")

    assert code == EXIT_FAILURE
    assert err == "dsh: error: nope\n"


def test_an_interrupt_exits_130_without_a_traceback() -> None:
    code, _, err = run([command("alpha", KeyboardInterrupt())], "alpha")

    assert code == EXIT_INTERRUPTED
    assert err == "dsh: interrupted\n"


def test_an_unexpected_exception_keeps_its_traceback() -> None:
    with pytest.raises(ZeroDivisionError):
        run([command("alpha", ZeroDivisionError("bug"))], "alpha")


def test_main_writes_to_the_process_streams_by_default(
    dsh: Cli, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: dsh ")


def test_python_dash_m_dsh_cli_runs_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["dsh", "--help"])

    with pytest.raises(SystemExit) as caught:
        runpy.run_module("dsh.cli", run_name="__main__")

    assert caught.value.code == 0
    assert "usage: dsh" in capsys.readouterr().out


def test_a_table_aligns_its_columns_and_prints_nothing_without_rows() -> None:
    out = io.StringIO()
    streams = Streams(out, io.StringIO())

    streams.table(["A", "BB"], [])
    streams.table(["A", "BB"], [["long", "x"], ["s", "yyy"]])

    assert out.getvalue() == "A     BB\nlong  x\ns     yyy\n"


# -- the data directory -------------------------------------------------------------


def test_the_data_directory_defaults_to_dsh_data_dir() -> None:
    assert default_data_dir({"DSH_DATA_DIR": "/srv/dsh"}) == Path("/srv/dsh")


def test_without_dsh_data_dir_the_data_directory_is_under_local_share(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    assert default_data_dir({}) == tmp_path / ".local" / "share" / "dsh"
    assert default_data_dir({"DSH_DATA_DIR": ""}) == tmp_path / ".local" / "share" / "dsh"


def test_the_process_environment_is_read_when_none_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DSH_DATA_DIR", "/from/env")

    assert default_data_dir() == Path("/from/env")


def test_data_dir_option_wins_over_the_environment_and_expands_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    given = argparse.Namespace(data_dir=Path("~/data"))
    absent = argparse.Namespace(data_dir=None)

    assert data_dir_of(given, {"DSH_DATA_DIR": "/env"}) == tmp_path / "data"
    assert data_dir_of(absent, {"DSH_DATA_DIR": "/env"}) == Path("/env")


# -- shared options for host commands ----------------------------------------------


def model_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    add_model_option(parser)
    add_overlay_option(parser)
    return parser


def test_the_model_option_overrides_the_overlay_which_overrides_the_default() -> None:
    with_model = parse_overlay('[host]\nmodel = "absent"\n')
    parser = model_parser()

    assert model_of(parser.parse_args(["--model", "openai"]), with_model) == "openai"
    assert model_of(parser.parse_args([]), with_model) == "absent"
    assert model_of(parser.parse_args([]), Overlay.default()) == "demo"
    assert model_of(parser.parse_args(["--model", "scripted:r.json"]), Overlay.default()) == (
        "scripted:r.json"
    )


def test_an_unknown_model_option_is_rejected_with_the_choices() -> None:
    # Without plugins nothing else could offer it: a usage error naming the choices.
    with pytest.raises(CommandError) as caught:
        model_of(model_parser().parse_args(["--model", "gpt"]), Overlay.default())

    assert "choose one of: demo, absent, scripted:PATH, openai" in str(caught.value)
    assert caught.value.code == EXIT_USAGE
    # A name no model could have is refused while parsing, whatever plugins are loaded.
    with pytest.raises(argparse.ArgumentError) as malformed:
        model_parser().parse_args(["--model", "GPT 5"])
    assert "choose one of: demo, absent, scripted:PATH, openai" in str(malformed.value)


def test_a_model_name_the_overlays_plugins_may_offer_is_left_to_the_host(tmp_path: Path) -> None:
    with_plugins = parse_overlay("[plugins.tool-schedule]\n")
    assert model_of(model_parser().parse_args(["--model", "echo"]), with_plugins) == "echo"


def test_without_an_overlay_option_the_overlay_is_the_default_tree() -> None:
    assert overlay_of(model_parser().parse_args([])) == Overlay.default()


def test_the_overlay_option_loads_the_overlay(tmp_path: Path) -> None:
    (tmp_path / "overlay.toml").write_text("[plugins.one]\n", encoding="utf-8")

    overlay = overlay_of(model_parser().parse_args(["--overlay", str(tmp_path)]))

    assert [spec.name for spec in overlay.plugins] == ["one"]


def test_an_invalid_overlay_option_is_a_command_error(tmp_path: Path) -> None:
    (tmp_path / "overlay.toml").write_text("nonsense = 1\n", encoding="utf-8")

    with pytest.raises(
        CommandError,
        match=r"nonsense: unknown table \(an overlay has the tables host, store, plugins\)",
    ) as caught:
        overlay_of(model_parser().parse_args(["--overlay", str(tmp_path)]))

    assert caught.value.code == EXIT_FAILURE


def test_an_overlays_model_name_and_model_settings_are_checked_when_it_is_read(
    tmp_path: Path,
) -> None:
    overlay = tmp_path / "overlay.toml"
    overlay.write_text('[host]\nmodel = "gpt"\n[host.openai]\nread_timout = 30\n', encoding="utf-8")

    with pytest.raises(CommandError) as caught:
        overlay_of(model_parser().parse_args(["--overlay", str(tmp_path)]))

    assert str(caught.value).splitlines() == [
        f"{overlay}: host.model: unknown model 'gpt'; "
        "choose one of: demo, absent, scripted:PATH, openai",
        f"{overlay}: host.openai.read_timout: Extra inputs are not permitted",
    ]
    assert caught.value.code == EXIT_FAILURE


def test_an_overlay_with_valid_model_settings_is_read(tmp_path: Path) -> None:
    (tmp_path / "overlay.toml").write_text(
        '[host]\nmodel = "openai"\n[host.openai]\nthinking = "disabled"\n', encoding="utf-8"
    )

    overlay = overlay_of(model_parser().parse_args(["--overlay", str(tmp_path)]))

    assert dict(overlay.host.model_settings["openai"]) == {"thinking": "disabled"}


def test_version_prints_the_host_version_on_stdout(dsh: Cli) -> None:
    result = dsh("--version")

    assert (result.code, result.out, result.err) == (0, f"dsh {VERSION}\n", "")


def test_a_table_lines_up_cjk_cells_by_the_columns_they_take_on_a_terminal() -> None:
    out = io.StringIO()
    streams = Streams(out, io.StringIO())

    streams.table(
        ["ID", "TITLE", "N"], [["a1", "开会笔记", "3"], ["b2", "plain", "10"], ["c3", "中", "7"]]
    )

    lines = out.getvalue().splitlines()
    assert lines == [
        "ID  TITLE     N",
        "a1  开会笔记  3",
        "b2  plain     10",
        "c3  中        7",
    ]
    # Every row's last column starts at the same terminal column.
    starts = {display_width(line[: line.rindex("  ") + 2]) for line in lines}
    assert starts == {14}
