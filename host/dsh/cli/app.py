"""The `dsh` command: its parser, its command registry and its exit codes.

Each top-level subcommand is a `Command` in `dsh.cli.COMMANDS`; adding one
(say `dsh web`) is one more module with a `COMMAND` and one more entry there. A
command's `configure(parser)` adds its arguments and sets the `run` default:
`run(args, streams) -> int`, which writes only to `streams`.

Exit codes: 0 success, 1 failure, 2 usage error (argparse's own convention).
An expected failure is raised as `CommandError` and printed as one
`dsh: error: ...` message on stderr, without a traceback; anything else is a
bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

from ..datadir import DATA_DIR_ENV, default_data_dir
from ..models.registry import ModelSettingsError, check_host, check_model
from ..overlay import Overlay, OverlayError, load_overlay

__all__ = [
    "DATA_DIR_ENV",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "Command",
    "CommandError",
    "Run",
    "Streams",
    "add_data_dir_option",
    "add_model_option",
    "add_overlay_option",
    "build_parser",
    "data_dir_of",
    "default_data_dir",
    "dispatch",
    "model_of",
    "overlay_of",
]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
PROG = "dsh"


@dataclass(frozen=True, slots=True)
class Streams:
    """Where a command writes: `out` for results, `err` for messages."""

    out: TextIO
    err: TextIO

    def line(self, text: str = "") -> None:
        """Write one line of output."""
        self.out.write(text + "\n")

    def note(self, text: str) -> None:
        """Write one line to stderr."""
        self.err.write(text + "\n")

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """Write `rows` under `header` in aligned columns; nothing at all when there are no rows."""
        if not rows:
            return
        lines = [header, *rows]
        widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
        for line in lines:
            cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=True)]
            self.line("  ".join(cells).rstrip())


Run = Callable[[argparse.Namespace, Streams], int]


class CommandError(Exception):
    """An expected failure: printed as `dsh: error: <message>` with exit code `code`."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


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
        (self._streams.out if file is sys.stdout else self._streams.err).write(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self._streams.err.write(message)
        raise _ParserExit(status)


def build_parser(commands: Sequence[Command], streams: Streams) -> argparse.ArgumentParser:
    """The `dsh` parser with one subparser per command."""
    parser = _Parser(
        prog=PROG,
        description="dsh: a small, pluggable agent host with durable, session-local reminders.",
        streams=streams,
    )
    subparsers = parser.add_subparsers(
        title="commands", dest="command", metavar="COMMAND", required=True
    )
    for command in commands:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
    return parser


def dispatch(
    commands: Sequence[Command],
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Parse `argv` (default: the process arguments), run the command; returns the exit code."""
    streams = Streams(stdout or sys.stdout, stderr or sys.stderr)
    parser = build_parser(commands, streams)
    try:
        args = parser.parse_args(argv)
    except _ParserExit as done:
        return done.status
    run: Run = args.run
    try:
        return run(args, streams)
    except CommandError as error:
        streams.note(f"{PROG}: error: {error}")
        return error.code
    except KeyboardInterrupt:
        streams.note(f"{PROG}: interrupted")
        return EXIT_INTERRUPTED


def add_data_dir_option(parser: argparse.ArgumentParser) -> None:
    """Add `--data-dir DIR`; read it back with `data_dir_of(args)`."""
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help=f"where Sessions are stored (default: ${DATA_DIR_ENV}, else ~/.local/share/dsh)",
    )


def data_dir_of(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Path:
    """The data directory `args` asks for: `--data-dir`, else `default_data_dir()`."""
    given: Path | None = args.data_dir
    return given.expanduser() if given is not None else default_data_dir(environ)


def add_overlay_option(
    parser: argparse.ArgumentParser, help: str = "the overlay file (or its directory) to load"
) -> None:
    """Add `--overlay PATH`; read it back with `overlay_of(args)`."""
    parser.add_argument("--overlay", type=Path, metavar="PATH", help=help)


def overlay_of(args: argparse.Namespace) -> Overlay:
    """The overlay `--overlay` names, or the default tree (no plugins) without one.

    Its `[host] model` and `[host.NAME]` model settings are checked by the
    model registry. Raises `CommandError` (exit 1) with the overlay's own
    message if it is invalid.
    """
    path: Path | None = args.overlay
    if path is None:
        return Overlay.default()
    try:
        overlay = load_overlay(path)
        check_host(overlay.host.model, overlay.host.model_settings, source=overlay.path)
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
    """The model to use: `--model`, else the overlay's `[host] model`, else `default`."""
    given: str | None = args.model
    return given or overlay.host.model or default


def _model(value: str) -> str:
    try:
        return check_model(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error
