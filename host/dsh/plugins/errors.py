"""The errors of the plugin layer: loading, overlays, hooks and a person's actions.

DshError (dsh.base.errors)
├── PluginError                       the loader failed; names the plugin
│   ├── PluginLoadError               a plugin could not be loaded
│   │   ├── MissingPlugin             named by an overlay, not installed
│   │   ├── AmbiguousPlugin           one entry-point name, several distributions
│   │   └── PluginConfigError(ValueError)  its overlay table does not match its Config
│   ├── PluginProblems                several plugins cannot be loaded
│   ├── PluginUnloadError             a plugin's scope did not close cleanly
│   └── PluginNotLoaded(LookupError)  no plugin of that name is loaded
├── OverlayError(ValueError)          an overlay that cannot be read or is not valid
├── HookNotImplemented(LookupError)   a plugin that is not loaded or lacks the hook
└── HostNotRunning                    a command's action needs a `dsh web` on its data dir
CodedError (dsh.base.errors)
└── ActionError                       a person's action refused: 404, 409, 422, 400
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.errors import CodedError, DshError

if TYPE_CHECKING:
    from .overlay import PluginSpec

__all__ = [
    "ActionError",
    "AmbiguousPlugin",
    "HookNotImplemented",
    "HostNotRunning",
    "MissingPlugin",
    "OverlayError",
    "PluginConfigError",
    "PluginError",
    "PluginLoadError",
    "PluginNotLoaded",
    "PluginProblems",
    "PluginUnloadError",
]


class ActionError(CodedError):
    """A person's action (`dsh_session_action`) was refused; `status` says how.

    The helpers name the usual cases: `not_found` (404: no such action),
    `invalid` (422: bad arguments) and `conflict` (409: the state changed
    under the person, e.g. a reminder that is already gone).
    """

    default_status = 400

    @classmethod
    def not_found(cls, message: str, code: str = "unknown_action") -> ActionError:
        return cls(code, message, status=404)

    @classmethod
    def invalid(cls, message: str, code: str = "invalid_arguments") -> ActionError:
        return cls(code, message, status=422)

    @classmethod
    def conflict(cls, message: str, code: str = "conflict") -> ActionError:
        return cls(code, message, status=409)


class HostNotRunning(DshError):
    """A plugin command asked for a person's action, and no `dsh web` runs on its data dir.

    The message names the data dir and how to start one.
    """


class OverlayError(DshError, ValueError):
    """An overlay that cannot be read or is not valid.

    `path` is the overlay file; `problems` holds `(location, message)` pairs,
    where a location is a TOML key path such as `plugins.tool-schedule.distribution`
    (empty for problems with the whole file); `plugin` is the plugin the
    problems belong to, when they all belong to one.
    """

    def __init__(
        self, path: Path | None, problems: list[tuple[str, str]], plugin: str | None = None
    ) -> None:
        where = str(path) if path is not None else "<overlay>"
        lines = [f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}" for loc, msg in problems]
        super().__init__("\n".join(lines))
        self.path = path
        self.problems = tuple(problems)
        self.plugin = plugin


class HookNotImplemented(DshError, LookupError):
    """The named plugin is not registered, or does not implement the hook."""

    def __init__(self, plugin: str, hook: str, registered: bool) -> None:
        reason = "does not implement it" if registered else "is not loaded"
        super().__init__(f"plugin {plugin!r} {reason} ({hook})")
        self.plugin = plugin
        self.hook = hook
        self.registered = registered


class PluginError(DshError):
    """Base class of the loader's errors."""


class PluginLoadError(PluginError):
    """A plugin could not be loaded. `plugin` is its entry-point name."""

    def __init__(self, plugin: str, message: str) -> None:
        super().__init__(message)
        self.plugin = plugin


class MissingPlugin(PluginLoadError):
    """Plugins named by an overlay are not installed.

    `missing` pairs each plugin's name with the distribution that would
    provide it (the overlay's `distribution`, else `dsh-<name>`). The message
    suggests an installed plugin whose name is close ("did you mean"), else
    asks whether that distribution is installed.
    """

    def __init__(self, missing: Sequence[tuple[PluginSpec, str]], notes: Sequence[str]) -> None:
        # `notes` finish each line: what is installed instead, then a question,
        # never a command: a name nothing installed resembles may be a typo, and
        # `pip install <typo>` could fetch a squatted package.
        lines = []
        for (spec, _), note in zip(missing, notes, strict=True):
            where = f" named in {spec.source}" if spec.source is not None else ""
            lines.append(f"plugin {spec.name!r}{where} is not installed{note}")
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
