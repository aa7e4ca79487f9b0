"""`dsh plugins [--overlay PATH]`: what is installed, and what an overlay enables.

Reads distribution metadata only; no plugin is imported. With an overlay,
each installed plugin is marked `yes` (the overlay enables it) or `no`, a
last line shows the overlay's host settings that change the Session
lifecycle (`wake_cold_sessions`, `idle_seconds`), and a plugin the overlay
names that is not installed gets a `missing` row; then the command fails
(exit 1) with the loader's `MissingPlugin` message, which names the
distribution to install.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ..loader import (
    ENTRY_POINT_GROUP,
    AmbiguousPlugin,
    InstalledPlugin,
    discover_plugins,
    missing_plugins,
    resolve_plugins,
)
from ..overlay import Overlay, PluginSpec
from .app import (
    EXIT_OK,
    Command,
    CommandError,
    Streams,
    add_overlay_option,
    overlay_of,
    overlay_path,
)

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
    enabled: set[tuple[str, str | None]] = set()
    ambiguous: list[AmbiguousPlugin] = []
    missing: list[tuple[PluginSpec, InstalledPlugin | None]] = []
    for spec in overlay.plugins:
        try:
            ((_, plugin),) = resolve_plugins([spec], installed)
        except AmbiguousPlugin as error:
            ambiguous.append(error)
            continue
        if plugin is None:
            missing.append((spec, plugin))
        else:
            enabled.add((plugin.name, plugin.distribution))
    unclear = {error.plugin for error in ambiguous}
    rows = [
        [*row, _state(plugin, enabled, unclear)]
        for plugin, row in zip(installed, _rows(installed), strict=True)
    ]
    rows += [[spec.name, "-", "-", "-", "missing"] for spec, _ in missing]
    streams.table(["NAME", "DISTRIBUTION", "VERSION", "TARGET", "ENABLED"], rows)
    streams.line(host_settings_line(overlay))
    problems = [str(error) for error in ambiguous]
    not_installed = missing_plugins(missing, installed)
    if not_installed is not None:
        problems.append(str(not_installed))
    if problems:
        raise CommandError("\n".join(problems))
    return EXIT_OK


def host_settings_line(overlay: Overlay) -> str:
    """The overlay's lifecycle settings, as `dsh plugins --overlay` prints them."""
    host = overlay.host
    wake = "true" if host.wake_cold_sessions else "false"
    idle = f"{host.idle_seconds:g}" + (" (never hibernate)" if host.idle_seconds == 0 else "")
    return f"host settings: wake_cold_sessions = {wake}, idle_seconds = {idle}"


def _state(plugin: InstalledPlugin, enabled: set[tuple[str, str | None]], unclear: set[str]) -> str:
    if plugin.name in unclear:
        return "ambiguous"
    return "yes" if (plugin.name, plugin.distribution) in enabled else "no"


def _rows(installed: Sequence[InstalledPlugin]) -> list[list[str]]:
    return [
        [plugin.name, plugin.distribution or "?", plugin.version or "?", plugin.target]
        for plugin in installed
    ]
