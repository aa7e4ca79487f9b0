"""What commands share: the store selection, and the plugin-command registry and context."""

from __future__ import annotations

import argparse
import io
import logging
from pathlib import Path
from typing import Any

import pytest

from dsh.base.visible import visible
from dsh.plugins.commands import (
    CommandContext,
    CommandRegistry,
    PluginCommand,
    Streams,
    add_store_options,
    data_dir_of,
    run_command,
)

from ...support.terminal import HOSTILE, obeyed

pytestmark = pytest.mark.anyio


def run(args: Any, context: Any) -> int:
    return 0


def test_register_stamps_the_plugin_and_strips_the_help() -> None:
    registry = CommandRegistry(reserved={"web"})
    registry.register_for("notes")("notes", run, help="  list notes ")
    registry.register_for("other")("another", run, help="more", configure=print)

    assert registry.commands() == [
        PluginCommand("other", "another", "more", run, print),
        PluginCommand("notes", "notes", "list notes", run, None),
    ]


@pytest.mark.parametrize(
    ("name", "command_run", "help", "configure", "error", "message"),
    [
        (3, run, "h", None, TypeError, "the command name must be a str, not int"),
        ("Notes", run, "h", None, ValueError, "'Notes' is not a command name"),
        ("x" * 33, run, "h", None, ValueError, "is not a command name"),
        ("notes", "run", "h", None, TypeError, "run must be callable, not str"),
        ("notes", run, "", None, TypeError, "help must be a non-empty str"),
        ("notes", run, None, None, TypeError, "help must be a non-empty str, not None"),
        ("notes", run, "h", 1, TypeError, "configure must be callable or None, not int"),
        ("web", run, "h", None, ValueError, "a built-in dsh command has that name"),
    ],
)
def test_register_refuses_bad_input_naming_the_plugin(
    name: Any, command_run: Any, help: Any, configure: Any, error: type[Exception], message: str
) -> None:
    register = CommandRegistry(reserved={"web"}).register_for("notes")

    with pytest.raises(error, match=message) as caught:
        register(name, command_run, help=help, configure=configure)

    assert str(caught.value).startswith("plugin 'notes'")


def test_a_failed_plugin_frees_the_names_it_took() -> None:
    registry = CommandRegistry(reserved=())
    registry.register_for("first")("shared", run, help="h")
    with pytest.raises(ValueError, match="plugin 'first' registered it first"):
        registry.register_for("second")("shared", run, help="h")
    registry.failed("first", "dsh_cli_commands", RuntimeError("boom"))
    registry.register_for("third")("shared", run, help="h")

    assert [(command.plugin, command.name) for command in registry.commands()] == [
        ("third", "shared")
    ]
    assert registry.problems == [
        "plugin 'first' offers no commands: dsh_cli_commands failed: RuntimeError: boom"
    ]


def test_the_store_selection_reads_the_option_the_environment_or_the_default(
    tmp_path: Path,
) -> None:
    parser = argparse.ArgumentParser()
    add_store_options(parser)

    given = parser.parse_args(["--data-dir", str(tmp_path)])
    absent = parser.parse_args([])
    bare = argparse.Namespace()

    assert data_dir_of(given) == tmp_path
    assert data_dir_of(absent, {"DSH_DATA_DIR": "/srv/dsh"}) == Path("/srv/dsh")
    assert data_dir_of(bare, {}) == Path.home() / ".local" / "share" / "dsh"


async def test_a_context_writes_to_the_command_s_streams(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    context = CommandContext("notes", Streams(out, err), argparse.Namespace(data_dir=tmp_path))

    context.line("one")
    context.table(["A", "B"], [["x", "long"], ["yy", "z"]])
    context.table(["A"], [])
    context.note("careful")

    assert out.getvalue() == "one\nA   B\nx   long\nyy  z\n"
    assert err.getvalue() == "careful\n"
    assert context.data_dir == tmp_path
    assert context.store_name == str(tmp_path)
    memory = CommandContext("notes", Streams(out, err), argparse.Namespace(store="memory:"))
    assert memory.store_name == "memory (kept only while the process runs)"
    assert await context.session_ids() == []  # no sessions folder: nothing stored
    await context.aclose()
    await context.aclose()


async def test_a_context_shows_control_characters_as_text_and_writes_exact_as_given(
    tmp_path: Path,
) -> None:
    out, err = io.StringIO(), io.StringIO()
    context = CommandContext("notes", Streams(out, err), argparse.Namespace(data_dir=tmp_path))

    context.line(f"title: {HOSTILE}\nsecond line")
    context.table(["ID", "PROMPT"], [["n1", f"a\nb{HOSTILE}"], ["n2", "plain"]])
    context.note(f"warning: {HOSTILE}")
    context.exact(f'{{"prompt": "{HOSTILE}"}}')

    lines = out.getvalue().split("\n")
    assert lines[:2] == [f"title: {visible(HOSTILE)}", "second line"]
    assert lines[2:5] == [
        "ID  PROMPT",
        f"n1  a\\nb{visible(HOSTILE)}",  # a cell stays on its row, aligned by what it shows
        "n2  plain",
    ]
    assert obeyed("\n".join(lines[:5])) == [] and obeyed(err.getvalue()) == []
    assert lines[5:] == [f'{{"prompt": "{HOSTILE}"}}', ""]  # exact: byte for byte
    assert err.getvalue() == f"warning: {visible(HOSTILE)}\n"


async def test_the_warnings_of_a_command_are_shown_as_text() -> None:
    streams = Streams(io.StringIO(), io.StringIO())

    with streams.warnings():
        logging.getLogger("dsh.tests").warning("skipped %s", f"sessions/{HOSTILE}.jsonl")

    assert streams.err.getvalue() == (  # type: ignore[attr-defined]
        f"dsh: warning: skipped sessions/{visible(HOSTILE)}.jsonl\n"
    )


async def test_run_command_awaits_async_runs_and_counts_none_as_success(tmp_path: Path) -> None:
    streams = Streams(io.StringIO(), io.StringIO())

    async def async_run(args: Any, context: Any) -> None:
        context.line("async")

    command = PluginCommand("p", "c", "h", async_run)

    assert await run_command(command, argparse.Namespace(data_dir=tmp_path), streams) == 0
    assert streams.out.getvalue() == "async\n"  # type: ignore[attr-defined]
