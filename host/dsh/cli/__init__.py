"""The `dsh` command line (public entry point `dsh.cli:main`).

`COMMANDS` is the registry of top-level subcommands, in help order; each lives
in its own module with a `COMMAND` (see `dsh.cli.app` for the contract).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from .app import Command, Streams
from .dispatch import dispatch
from .errors import CommandError
from .index import COMMAND as INDEX
from .plugins import COMMAND as PLUGINS
from .scaffold import COMMAND as PLUGIN
from .sessions import COMMAND as SESSIONS
from .store import COMMAND as STORE
from .web import COMMAND as WEB

__all__ = ["COMMANDS", "Command", "CommandError", "Streams", "main"]

COMMANDS: tuple[Command, ...] = (WEB, PLUGINS, PLUGIN, SESSIONS, STORE, INDEX)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run `dsh` with `argv` (default: the process arguments); returns the exit code."""
    return dispatch(COMMANDS, argv, stdout=stdout, stderr=stderr)
