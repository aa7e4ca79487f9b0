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

Without any overlay, a command word `dsh` does not know is one usage error
(`unknown_command_hint`). To make it say what a person needs — which plugin
offers the command, and which overlay here enables that plugin — `dsh` asks
each installed plugin (alone, in a throwaway Host like the one above, which
runs nothing) which commands it registers, and reads the overlays under
`./overlays/` (TOML only). That is all it does with them: the command itself
never runs without an overlay that enables its plugin.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection
from pathlib import Path

import anyio

from ..host.errors import HostError
from ..host.host import Host
from ..models.absent import AbsentModel
from ..persistence.errors import BackendChoiceError, StorageError
from ..persistence.memory import MemoryBackend
from ..plugins.commands import CommandRegistry, PluginCommand, Streams, run_command
from ..plugins.errors import HostNotRunning, OverlayError, PluginError
from ..plugins.loader import InstalledPlugin, discover_plugins
from ..plugins.overlay import OVERLAY_FILE, PluginSpec, load_overlay
from .app import Command, build_parser, parse
from .errors import CommandError
from .host_actions import post_action

__all__ = ["as_command", "offered_commands", "run_with_plugins", "unknown_command_hint"]


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
            host.contributions.cli_commands(registry.register_for, registry.failed)
            for problem in registry.problems:
                streams.note(f"dsh: {problem}")
            commands = [as_command(command) for command in registry.commands()]
            args = parse(build_parser([*builtins, *commands], streams), argv)
            if isinstance(args, int):
                return args
            command: PluginCommand | None = getattr(args, "plugin_command", None)
            if command is None:  # no command word: the help (dispatch runs built-in commands)
                code: int = args.run(args, streams)
                return code
            return await run_command(command, args, streams, post_action=post_action)

    try:
        return anyio.run(main)
    except (
        PluginError,
        HostError,
        HostNotRunning,
        StorageError,
        BackendChoiceError,
        OSError,
    ) as error:
        raise CommandError(str(error)) from error


def unknown_command_hint(word: str, cwd: Path | None = None) -> str | None:
    """One line naming the installed plugin that offers command `word` and how to enable it.

    None when no installed plugin offers it. `cwd` (default: the current
    directory) is where `overlays/*/overlay.toml` are looked for.
    """
    plugin = next((found for found in discover_plugins() if word in offered_commands(found)), None)
    if plugin is None:
        return None
    offered = f"{word!r} is a command of plugin {plugin.name} ({plugin.label})"
    overlays = _overlays_enabling(plugin.name, Path.cwd() if cwd is None else cwd)
    if overlays:
        return (
            f"{offered}, which needs an overlay that enables it: dsh {word} ... --overlay "
            f"{overlays[0]} (or set DSH_OVERLAY={overlays[0]})"
        )
    return (
        f"{offered}, which needs an overlay that enables it: give one with --overlay PATH "
        "(before or after the command) or $DSH_OVERLAY"
    )


def offered_commands(plugin: InstalledPlugin) -> list[str]:
    """The command names `plugin` registers when loaded alone (default config); [] if it fails."""

    async def ask() -> list[str]:
        registry = CommandRegistry(())
        spec = PluginSpec(plugin.name, distribution=plugin.distribution)
        host = Host(backend=MemoryBackend(), model=AbsentModel(), plugins=[spec])
        async with host:
            host.contributions.cli_commands(registry.register_for, registry.failed)
        return [command.name for command in registry.commands()]

    try:
        return anyio.run(ask)
    except Exception:  # a plugin that cannot load alone offers nothing here
        return []


def _overlays_enabling(plugin: str, cwd: Path) -> list[str]:
    """The overlays under `cwd/overlays/` that name `plugin`, as relative directories."""
    found = []
    for path in sorted((cwd / "overlays").glob(f"*/{OVERLAY_FILE}")):
        try:
            overlay = load_overlay(path)
        except OverlayError:
            continue
        if any(spec.name == plugin for spec in overlay.plugins):
            found.append(path.parent.relative_to(cwd).as_posix())
    return found
