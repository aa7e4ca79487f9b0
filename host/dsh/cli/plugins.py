"""`dsh plugins [--overlay PATH]`: what is installed, and what an overlay enables.

Without an overlay it reads distribution metadata only; no plugin is
imported. With one, each installed plugin is marked `yes` (the overlay
enables it) or `no`, a plugin the overlay names that is not installed gets a
`missing` row, and each enabled plugin is checked exactly as `dsh web` checks
it before it starts — by the same function (`dsh.host.plugin_check`: its
class is imported, its hooks and config table validated, then it is loaded
once into a scratch Host, where a tool name two plugins share is found): one
it would refuse is marked `error`. A warning (a plugin that implements no
hook) is a note on stderr and does not fail the command. A last line shows
the overlay's host settings that change the Session lifecycle
(`wake_cold_sessions`, `idle_seconds`). Then the command fails (exit 1) with
the loader's messages, one line per problem (the plugin not installed, the
config key that is wrong).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..host.plugin_check import check_plugins
from ..plugins.errors import AmbiguousPlugin
from ..plugins.loader import ENTRY_POINT_GROUP, InstalledPlugin, discover_plugins
from ..plugins.overlay import Overlay
from .app import EXIT_OK, Command, Streams, add_overlay_option, overlay_of, overlay_path
from .errors import CommandError

__all__ = ["COMMAND"]


def _configure(parser: argparse.ArgumentParser) -> None:
    add_overlay_option(
        parser, help="an overlay file (or its directory): show which plugins it enables"
    )
    parser.set_defaults(run=_run)


COMMAND = Command(
    name="plugins",
    help=f"list installed dsh plugins (entry-point group {ENTRY_POINT_GROUP})",
    configure=_configure,
)


def _run(args: argparse.Namespace, streams: Streams) -> int:
    installed = discover_plugins()
    if overlay_path(args) is None:
        streams.table(["NAME", "DISTRIBUTION", "VERSION", "TARGET"], _rows(installed))
        if not installed:
            streams.note(f"no dsh plugins are installed (entry-point group {ENTRY_POINT_GROUP})")
        return EXIT_OK
    return _run_with_overlay(streams, installed, overlay_of(args))


def _run_with_overlay(
    streams: Streams, installed: Sequence[InstalledPlugin], overlay: Overlay
) -> int:
    checks = check_plugins(overlay.plugins, installed)
    states: dict[tuple[str, str | None], str] = {}
    for check in checks:
        if check.plugin is not None:
            key = (check.plugin.name, check.plugin.distribution)
            states[key] = "yes" if check.problem is None else "error"
        elif isinstance(check.problem, AmbiguousPlugin):
            states.update(
                {
                    (plugin.name, plugin.distribution): "ambiguous"
                    for plugin in installed
                    if plugin.name == check.spec.name
                }
            )
    rows = [
        [*row, states.get((plugin.name, plugin.distribution), "no")]
        for plugin, row in zip(installed, _rows(installed), strict=True)
    ]
    rows += [
        [check.spec.name, "-", "-", "-", "missing"]
        for check in checks
        if check.plugin is None and not isinstance(check.problem, AmbiguousPlugin)
    ]
    streams.table(["NAME", "DISTRIBUTION", "VERSION", "TARGET", "ENABLED"], rows)
    streams.line(host_settings_line(overlay))
    for check in checks:
        for warning in check.warnings:
            streams.note(f"warning: {warning}")
    problems = [str(check.problem) for check in checks if check.problem is not None]
    if problems:
        raise CommandError("\n".join(problems), problems=problems)
    return EXIT_OK


def host_settings_line(overlay: Overlay) -> str:
    """The overlay's lifecycle settings, as `dsh plugins --overlay` prints them."""
    host = overlay.host
    wake = "true" if host.wake_cold_sessions else "false"
    idle = f"{host.idle_seconds:g}" + (" (never hibernate)" if host.idle_seconds == 0 else "")
    return f"host settings: wake_cold_sessions = {wake}, idle_seconds = {idle}"


def _rows(installed: Sequence[InstalledPlugin]) -> list[list[str]]:
    return [
        [plugin.name, plugin.distribution or "?", plugin.version or "?", plugin.target]
        for plugin in installed
    ]
