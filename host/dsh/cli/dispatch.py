"""`dispatch`: from `dsh`'s arguments to the command that runs, and its exit code.

A built-in command word runs its `Command`; any other word runs a plugin's
command, found through an overlay: `--overlay`, a trailing `--overlay`,
`$DSH_OVERLAY`, else the one the data dir remembers (`--data-dir DIR` in the
arguments, else the default data dir; `dsh.web.running`: the overlay the last
`dsh web` on it ran with). Without any, an unknown word is one usage error
naming the installed plugin that offers it and the data dir. See
`dsh.cli.app` for the exit codes and how errors are printed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from ..persistence.datadir import default_data_dir
from ..plugins.commands import Streams
from ..web.running import remembered_overlay
from .app import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    PROG,
    Command,
    Run,
    build_parser,
    command_word,
    environment_overlay,
    parse,
    trailing_overlay,
)
from .errors import CommandError

__all__ = ["dispatch"]


def _data_dir(argv: Sequence[str], environ: Mapping[str, str] | None) -> Path:
    """The data dir a plugin command's `argv` names (`--data-dir DIR`), else the default."""
    given: str | None = None
    for index, token in enumerate(argv):
        if token == "--":
            break
        if token == "--data-dir" and index + 1 < len(argv):
            given = argv[index + 1]
        elif token.startswith("--data-dir="):
            given = token.removeprefix("--data-dir=")
    return Path(given).expanduser() if given else default_data_dir(environ)


def dispatch(
    commands: Sequence[Command],
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Parse `argv` (default: the process arguments), run the command; returns the exit code.

    `environ` (default: the process environment) is where `$DSH_OVERLAY` is read.
    """
    streams = Streams(stdout or sys.stdout, stderr or sys.stderr)
    arguments = list(sys.argv[1:] if argv is None else argv)
    word, overlay = command_word(arguments)
    builtin = word in {command.name for command in commands}
    try:
        if word is not None and not builtin:
            arguments, trailing = trailing_overlay(arguments)
            overlay = trailing or overlay
        overlay = overlay or environment_overlay(environ)
        if overlay is None and word is not None and not builtin:
            data_dir = _data_dir(arguments, environ)
            overlay = remembered_overlay(data_dir)
        if overlay is None and word is not None and not builtin:
            # Imported here: naming the plugin loads the Host, which built-in commands never need.
            from .plugin_commands import unknown_command_hint

            hint = unknown_command_hint(word)
            if hint is not None:
                raise CommandError(
                    f"{hint}; the data dir {data_dir} remembers none (a dsh web started "
                    "there with --overlay makes it remember)",
                    EXIT_USAGE,
                )
        if overlay is not None and not builtin:
            from .plugin_commands import run_with_plugins

            return run_with_plugins(commands, arguments, overlay, streams)
        args = parse(build_parser(commands, streams), arguments)
        if isinstance(args, int):
            return args
        if args.global_overlay is None:
            args.global_overlay = overlay
        run: Run = args.run
        return run(args, streams)
    except CommandError as error:
        for problem in error.problems or (str(error),):
            streams.note(f"{PROG}: error: {problem}")
        return error.code
    except KeyboardInterrupt:
        streams.note(f"{PROG}: interrupted")
        return EXIT_INTERRUPTED
