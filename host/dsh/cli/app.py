"""The `dsh` command: its parser, its command registry and its exit codes.

Each top-level subcommand is a `Command` in `dsh.cli.COMMANDS`; adding one
(say `dsh web`) is one more module with a `COMMAND` and one more entry there. A
command's `configure(parser)` adds its arguments and sets the `run` default:
`run(args, streams) -> int`, which writes only to `streams`.

Exit codes: 0 success, 1 failure, 2 usage error (argparse's own convention).
An expected failure is raised as `CommandError` and printed as one
`dsh: error: ...` message on stderr, without a traceback; anything else is a
bug and keeps its traceback. A usage error is one line too, naming the
problem and where the options are listed (`... (see 'dsh web --help')`),
never the whole usage text. A command word alone (`dsh`, `dsh sessions`)
prints its help and exits 0; `dsh --version` prints `dsh <version>` and exits 0.

`dsh --overlay PATH COMMAND ...` also offers the commands of the plugins that
overlay enables (`dsh.cli.plugin_commands`); for a built-in command that
takes `--overlay` itself, it is the default of that option. Without the
option, `$DSH_OVERLAY` (`OVERLAY_ENV`) is that overlay. A plugin's command
also takes `--overlay PATH` anywhere after its command word (`dsh reminders
list --overlay overlays/web-schedule`): it is taken out before the command's
own arguments are parsed, and wins over the others. A command word that is
neither built in nor offered by the given overlay's plugins, when no overlay
is given at all, is one usage error that names the installed plugin offering
it and an overlay here that enables it (`plugin_commands.unknown_command_hint`).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from ..base.version import VERSION
from ..base.visible import visible_lines
from ..models.errors import ModelSettingsError
from ..models.registry import check_host, check_model
from ..persistence.backends import BackendChoice
from ..persistence.datadir import DATA_DIR_ENV, default_data_dir
from ..persistence.errors import BackendChoiceError
from ..plugins import commands
from ..plugins.commands import Streams, add_store_options, data_dir_of
from ..plugins.errors import OverlayError
from ..plugins.overlay import Overlay, load_overlay
from .errors import CommandError

__all__ = [
    "DATA_DIR_ENV",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "OVERLAY_ENV",
    "Command",
    "Run",
    "Streams",
    "add_data_dir_option",
    "add_help_default",
    "add_model_option",
    "add_overlay_option",
    "backend_choice",
    "build_parser",
    "command_word",
    "data_dir_of",
    "default_data_dir",
    "environment_overlay",
    "model_of",
    "overlay_of",
    "overlay_path",
    "parse",
    "trailing_overlay",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
PROG = "dsh"
OVERLAY_ENV = "DSH_OVERLAY"


Run = Callable[[argparse.Namespace, Streams], int]


@dataclass(frozen=True, slots=True)
class Command:
    """A top-level subcommand: `configure(parser)` adds arguments and sets `run`."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]


class _ParserExit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser that writes to given streams and never calls `sys.exit`."""

    def __init__(self, *args: Any, streams: Streams, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._streams = streams

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", functools.partial(_Parser, streams=self._streams))
        return super().add_subparsers(**kwargs)

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse names the process streams; help goes to `out`, everything else to `err`.
        # Its messages quote the arguments given, so they are shown as text.
        (self._streams.out if file is sys.stdout else self._streams.err).write(
            visible_lines(message)
        )

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self._streams.err.write(visible_lines(message))
        raise _ParserExit(status)

    def error(self, message: str) -> NoReturn:
        """A usage error: one line naming the problem and where the options are."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {_plain(message)} (see '{self.prog} --help')\n")


_CHOICE = re.compile(r"argument (COMMAND|ACTION): invalid choice: (.*) \(choose from (.*)\)")


def _plain(message: str) -> str:
    """argparse's wording, where it reads like a program talking to itself, in plain words."""
    choice = _CHOICE.fullmatch(message)
    if choice is not None:
        word, given, known = choice.groups()
        return f"unknown {word.lower()} {given}; choose one of {known.replace(chr(39), '')}"
    return message


def add_help_default(parser: argparse.ArgumentParser) -> None:
    """Make `parser` alone (no subcommand word) print its help and exit 0."""

    def show_help(args: argparse.Namespace, streams: Streams) -> int:
        streams.out.write(visible_lines(parser.format_help()))
        return EXIT_OK

    parser.set_defaults(run=show_help)


def build_parser(commands: Sequence[Command], streams: Streams) -> argparse.ArgumentParser:
    """The `dsh` parser with one subparser per command."""
    parser = _Parser(
        prog=PROG,
        description="dsh: a small, pluggable agent host with durable, session-local reminders.",
        streams=streams,
    )
    parser.add_argument(
        "--overlay",
        dest="global_overlay",
        type=Path,
        metavar="PATH",
        help="an overlay (file or directory): its plugins' commands are offered too, "
        "and it is the default --overlay of the commands that take one",
    )
    parser.add_argument(
        "--version", action="version", version=f"{PROG} {VERSION}", help="print dsh's version"
    )
    parser.epilog = (
        "Plugins add commands of their own when an overlay enables them: "
        "dsh --overlay PATH --help lists them."
    )
    subparsers = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    add_help_default(parser)
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
    return parser


def parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace | int:
    """`parser.parse_args(argv)`, or the exit status when argparse ends (help, usage error)."""
    try:
        return parser.parse_args(argv)
    except _ParserExit as done:
        return done.status


def command_word(argv: Sequence[str]) -> tuple[str | None, Path | None]:
    """The command word of `argv` and the global `--overlay` before it (None when absent)."""
    index, overlay = _command_index(argv)
    return (None if index is None else argv[index]), overlay


def _command_index(argv: Sequence[str]) -> tuple[int | None, Path | None]:
    overlay: Path | None = None
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--overlay" and index + 1 < len(argv):
            overlay = Path(argv[index + 1])
            index += 2
            continue
        if token.startswith("--overlay="):
            overlay = Path(token.removeprefix("--overlay="))
        elif token == "--":
            following = index + 1
            word = following < len(argv) and argv[following] != "--"
            return (following if word else None), overlay
        elif not token.startswith("-"):
            return index, overlay
        index += 1
    return None, overlay


def trailing_overlay(argv: Sequence[str]) -> tuple[list[str], Path | None]:
    """`argv` without the `--overlay PATH` options after its command word, and the last one.

    For plugin commands, which take the overlay anywhere: the options after a
    `--` are the command's own, and a last `--overlay` without a value is
    left for the parser to refuse.
    """
    index, _ = _command_index(argv)
    if index is None:
        return list(argv), None
    kept, overlay = list(argv[: index + 1]), None
    rest = iter(enumerate(argv[index + 1 :], start=index + 1))
    for position, token in rest:
        if token == "--":
            kept += argv[position:]
            break
        if token == "--overlay" and position + 1 < len(argv):
            overlay = Path(next(rest)[1])
        elif token.startswith("--overlay="):
            overlay = Path(token.removeprefix("--overlay="))
        else:
            kept.append(token)
    return kept, overlay


def environment_overlay(environ: Mapping[str, str] | None = None) -> Path | None:
    """The overlay `$DSH_OVERLAY` names (None when it is unset or empty)."""
    value = (os.environ if environ is None else environ).get(OVERLAY_ENV)
    return Path(value).expanduser() if value else None


add_data_dir_option = add_store_options
"""Add `--data-dir DIR` and `--store URL`; read them back with `backend_choice(args)`
(`dsh.commands`), or the data dir alone with `data_dir_of(args)`."""


def backend_choice(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> BackendChoice:
    """The store `--store` (else `$DSH_STORE`, else `jsonl:<data dir>`) selects.

    Raises `CommandError` (exit 1) naming what is wrong with the URL.
    """
    try:
        return commands.backend_choice(args, environ)
    except BackendChoiceError as error:
        raise CommandError(str(error)) from error


def add_overlay_option(
    parser: argparse.ArgumentParser, help: str = "the overlay file (or its directory) to load"
) -> None:
    """Add `--overlay PATH`; read it back with `overlay_of(args)`."""
    parser.add_argument("--overlay", type=Path, metavar="PATH", help=help)


def overlay_path(args: argparse.Namespace) -> Path | None:
    """The overlay `args` name: the command's `--overlay`, else the global one, else None."""
    given: Path | None = getattr(args, "overlay", None) or getattr(args, "global_overlay", None)
    return given


def overlay_of(args: argparse.Namespace) -> Overlay:
    """The overlay `--overlay` names, or the default tree (no plugins) without one.

    Its `[host] model` and `[host.NAME]` model settings are checked by the
    model registry. Raises `CommandError` (exit 1) with the overlay's own
    message if it is invalid.
    """
    path = overlay_path(args)
    if path is None:
        return Overlay.default()
    try:
        overlay = load_overlay(path)
        check_host(
            overlay.host.model,
            overlay.host.model_settings,
            source=overlay.path,
            plugins=bool(overlay.plugins),
        )
    except (OverlayError, ModelSettingsError) as error:
        raise CommandError(str(error)) from error
    return overlay


def add_model_option(parser: argparse.ArgumentParser) -> None:
    """Add `--model demo|absent|openai|scripted:PATH`; read it back with `model_of(args, ...)`."""
    parser.add_argument(
        "--model",
        type=_model,
        metavar="MODEL",
        help="demo | absent | openai | scripted:PATH (overrides the overlay's [host] model)",
    )


def model_of(args: argparse.Namespace, overlay: Overlay, default: str = "demo") -> str:
    """The model to use: `--model`, else the overlay's `[host] model`, else `default`.

    A name that is not built in is a usage error unless the overlay loads
    plugins, one of which may offer it (the Host checks when it starts).
    """
    given: str | None = args.model
    chosen = given or overlay.host.model or default
    try:
        return check_model(chosen, plugins=bool(overlay.plugins))
    except ValueError as error:
        raise CommandError(str(error), EXIT_USAGE) from error


def _model(value: str) -> str:
    try:
        return check_model(value, plugins=True)  # which plugins offer more: see `model_of`
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error
