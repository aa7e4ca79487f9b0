"""`dispatch`: from `dsh`'s arguments to the command that runs, and its exit code.

A built-in command word runs its `Command`; any other word runs a plugin's
command, found through an overlay (`--overlay`, a trailing `--overlay` or
`$DSH_OVERLAY`; `dsh.cli.plugin_commands`). Without an overlay, an unknown word
is one usage error naming the installed plugin that offers it. See
`dsh.cli.app` for the exit codes and how errors are printed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from ..plugins.commands import Streams
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
            # Imported here: naming the plugin loads the Host, which built-in commands never need.
            from .plugin_commands import unknown_command_hint

            hint = unknown_command_hint(word)
            if hint is not None:
                raise CommandError(hint, EXIT_USAGE)
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
