"""The loader's errors: each names the plugin, and where it helps, the distribution."""

from __future__ import annotations

from collections.abc import Sequence

from ..overlay import PluginSpec

__all__ = [
    "AmbiguousPlugin",
    "MissingPlugin",
    "PluginConfigError",
    "PluginError",
    "PluginLoadError",
    "PluginNotLoaded",
    "PluginProblems",
    "PluginUnloadError",
]


class PluginError(Exception):
    """Base class of the loader's errors."""


class PluginLoadError(PluginError):
    """A plugin could not be loaded. `plugin` is its entry-point name."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(message)
        self.plugin = plugin


class MissingPlugin(PluginLoadError):
    """Plugins named by an overlay are not installed.

    `missing` pairs each plugin's name with the distribution that provides it.
    """

    def __init__(self, missing: Sequence[tuple[PluginSpec, str]], notes: Sequence[str]) -> None:
        lines = []
        for (spec, distribution), note in zip(missing, notes, strict=True):
            where = f" named in {spec.source}" if spec.source is not None else ""
            lines.append(
                f"plugin {spec.name!r}{where} is not installed{note}; install the "
                f"distribution {distribution} (pip install {distribution})"
            )
        super().__init__(missing[0][0].name, "\n".join(lines))
        self.missing = tuple((spec.name, distribution) for spec, distribution in missing)


class AmbiguousPlugin(PluginLoadError):
    """Several installed distributions provide the same entry-point name."""


class PluginConfigError(PluginLoadError, ValueError):
    """A plugin's overlay table does not match its `Config`. `fields` are key paths."""

    def __init__(self, plugin: str, message: str, fields: Sequence[str]) -> None:
        super().__init__(plugin, message)
        self.fields = tuple(fields)


class PluginProblems(PluginError):
    """Several plugins cannot be loaded; `problems` has one line per problem."""

    def __init__(self, problems: Sequence[PluginError]) -> None:
        self.problems = tuple(str(problem) for problem in problems)
        super().__init__("\n".join(self.problems))


class PluginUnloadError(PluginError):
    """A plugin's scope did not close cleanly; the plugin is unloaded regardless."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(message)
        self.plugin = plugin


class PluginNotLoaded(PluginError, LookupError):
    """No plugin with that name is loaded by this loader."""
