"""Discovery: what the `dsh.plugins` entry-point group (public) offers, and matching specs to it.

Nothing here imports a plugin: discovery reads distribution metadata only.
An overlay names plugins by entry-point name; by convention plugin `X` ships
in distribution `dsh-X`, and a spec may name its distribution explicitly.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import importlib_metadata

from ...base.validation import key_path
from ..errors import AmbiguousPlugin, MissingPlugin
from ..overlay import PluginSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "InstalledPlugin",
    "conventional_distribution",
    "discover_plugins",
    "missing_plugins",
    "resolve_plugins",
]

ENTRY_POINT_GROUP = "dsh.plugins"


@dataclass(frozen=True, slots=True)
class InstalledPlugin:
    """An entry point in the `dsh.plugins` group: what is installed, not loaded.

    `distribution` and `version` are None only for an entry point that is not
    attached to a distribution's metadata.
    """

    name: str
    distribution: str | None
    version: str | None
    target: str
    entry_point: importlib_metadata.EntryPoint = field(repr=False, compare=False)

    @classmethod
    def from_entry_point(cls, entry_point: importlib_metadata.EntryPoint) -> InstalledPlugin:
        dist = entry_point.dist
        return cls(
            name=entry_point.name,
            distribution=dist.name if dist is not None else None,
            version=dist.version if dist is not None else None,
            target=entry_point.value,
            entry_point=entry_point,
        )

    @property
    def label(self) -> str:
        """`distribution version`, for messages."""
        if self.distribution is None:
            return "an unknown distribution"
        return f"{self.distribution} {self.version}"


def discover_plugins() -> tuple[InstalledPlugin, ...]:
    """Every installed `dsh.plugins` entry point, sorted by name. Imports nothing."""
    found = importlib_metadata.entry_points(group=ENTRY_POINT_GROUP)
    plugins = (InstalledPlugin.from_entry_point(entry_point) for entry_point in found)
    return tuple(sorted(plugins, key=lambda plugin: (plugin.name, plugin.distribution or "")))


def conventional_distribution(name: str) -> str:
    """The distribution that ships plugin `name` by convention: `dsh-<name>`."""
    return f"dsh-{name}"


def _normalized(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def resolve_plugins(
    specs: Iterable[PluginSpec], installed: Iterable[InstalledPlugin]
) -> list[tuple[PluginSpec, InstalledPlugin | None]]:
    """Pair each spec with its installed entry point (None when it is missing), in order.

    A spec that names a `distribution` matches only entry points from that
    distribution. Raises `AmbiguousPlugin` when several distributions match.
    """
    available = tuple(installed)
    pairs: list[tuple[PluginSpec, InstalledPlugin | None]] = []
    for spec in specs:
        matches = [
            plugin
            for plugin in available
            if plugin.name == spec.name
            and (
                spec.distribution is None
                or _normalized(plugin.distribution or "") == _normalized(spec.distribution)
            )
        ]
        if len(matches) > 1:
            labels = ", ".join(plugin.label for plugin in matches)
            raise AmbiguousPlugin(
                spec.name,
                f"plugin {spec.name!r} is provided by several distributions ({labels}); "
                f'name one with distribution = "..." in [plugins.{key_path((spec.name,))}]'
                + (f" of {spec.source}" if spec.source is not None else ""),
            )
        pairs.append((spec, matches[0] if matches else None))
    return pairs


def missing_plugins(
    pairs: Iterable[tuple[PluginSpec, InstalledPlugin | None]],
    installed: Iterable[InstalledPlugin],
) -> MissingPlugin | None:
    """The `MissingPlugin` error for the unresolved pairs, or None if all resolved.

    Each missing plugin's line ends with advice: where the name is installed
    from instead (when the spec names another distribution), else "did you
    mean" the closest installed plugin name (`difflib`), else a question
    whether the distribution that would ship it is installed. Never a
    command: a typo's `pip install` could fetch a squatted package.
    """
    available = tuple(installed)
    names = sorted({plugin.name for plugin in available})
    missing: list[tuple[PluginSpec, str]] = []
    notes: list[str] = []
    for spec, plugin in pairs:
        if plugin is not None:
            continue
        distribution = spec.distribution or conventional_distribution(spec.name)
        missing.append((spec, distribution))
        others = [other.label for other in available if other.name == spec.name]
        if others:
            notes.append(f" from {spec.distribution} (it is installed from {', '.join(others)})")
            continue
        close = difflib.get_close_matches(spec.name, names, n=1)
        if close:
            labels = ", ".join(other.label for other in available if other.name == close[0])
            notes.append(f"; did you mean {close[0]!r} (installed from {labels})?")
        else:
            notes.append(
                f"; is the distribution that ships it ({distribution}"
                + ("" if spec.distribution else ", by convention")
                + ") installed in this environment?"
            )
    return MissingPlugin(missing, notes) if missing else None
