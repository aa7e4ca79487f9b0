"""Plugin commands: `dsh --overlay PATH COMMAND ...` runs a subcommand a plugin registered.

The overlay is the allowlist here too: only the plugins it enables can add
commands, and only when it is given before the command word (`dsh --overlay
overlays/web-schedule reminders list`). Built-in commands never load a plugin.

To offer its commands, `dsh` loads the overlay's plugins into a Host that
starts no agent and stores nothing (its own storage is in memory), calls
`dsh_cli_commands(register)` on each (see `dsh.hookspecs`; the contract of
`register` and of the `CommandContext` a command runs with is
`dsh.commands`), adds every registered command to the parser, parses, and
runs the chosen one. A plugin whose hook raised registers no command: one
line on stderr says so, and the other plugins' commands still work.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from pathlib import Path

import anyio

from ..commands import CommandRegistry, PluginCommand, Streams, run_command
from ..host import Host, HostError
from ..loader import PluginError
from ..models.absent import AbsentModel
from ..overlay import OverlayError, load_overlay
from ..persistence.backend import StorageError
from ..persistence.memory import MemoryBackend
from ..persistence.stores import StoreError
from .app import Command, CommandError, build_parser, parse

__all__ = ["as_command", "run_with_plugins"]


def as_command(command: PluginCommand) -> Command:
    """The subcommand `build_parser` adds for `command`, marked as that plugin's."""

    def configure(parser: argparse.ArgumentParser) -> None:
        if command.configure is not None:
            command.configure(parser)
        parser.set_defaults(plugin_command=command)

    return Command(
        name=command.name, help=f"{command.help} (plugin {command.plugin})", configure=configure
    )


def run_with_plugins(
    builtins: Collection[Command], argv: list[str], overlay_path: Path, streams: Streams
) -> int:
    """Parse `argv` with the built-in commands plus the overlay's plugins' ones, and run it.

    Called when the command word is not a built-in one (or is missing, as in
    `dsh --overlay PATH --help`). Raises `CommandError` when the overlay or a
    plugin cannot be loaded, or the command cannot read storage.
    """
    try:
        overlay = load_overlay(overlay_path)
    except OverlayError as error:
        raise CommandError(str(error)) from error

    async def main() -> int:
        registry = CommandRegistry({command.name for command in builtins})
        host = Host(backend=MemoryBackend(), model=AbsentModel(), plugins=overlay.plugins)
        async with host:
            host.cli_commands(registry.register_for, registry.failed)
            for problem in registry.problems:
                streams.note(f"dsh: {problem}")
            commands = [as_command(command) for command in registry.commands()]
            args = parse(build_parser([*builtins, *commands], streams), argv)
            if isinstance(args, int):
                return args
            command: PluginCommand | None = getattr(args, "plugin_command", None)
            if command is None:
                raise AssertionError("unreachable: dispatch runs built-in commands itself")
            return await run_command(command, args, streams)

    try:
        return anyio.run(main)
    except (PluginError, HostError, StorageError, StoreError, OSError) as error:
        raise CommandError(str(error)) from error
