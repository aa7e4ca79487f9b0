"""The plugin loader: discovery through entry points, loading per Host, unloading.

Discovery reads the `dsh.plugins` entry-point group (public) and imports
nothing. The overlay is the allowlist: the loader loads exactly the plugins it
is given (`dsh.plugins.overlay.PluginSpec`s), never one just because it is installed.

Loading a plugin, in order:

1. resolve its entry point (`MissingPlugin` names the distribution to install);
2. import the entry point's target, which must be a class (`PluginLoadError`
   chains the original exception, so its traceback is kept);
3. validate the overlay table with the class's `Config` pydantic model
   (strict; the model must forbid extra keys); no `Config` means the table
   must be empty (`PluginConfigError` names the overlay file, plugin and field);
4. build its `PluginContext` through the Host's factory and instantiate
   `cls(context)` — once per loader, i.e. once per Host: nothing is cached at
   module level, so two Hosts never share a plugin instance;
5. register the instance with the Host's pluggy `PluginManager` under its
   entry-point name. pluggy validates hook signatures; a hook implementation
   that matches no `dsh` hook specification is rejected too (mark it
   `optionalhook=True` to ship a hook for a newer host), and so is a hook
   implemented as a wrapper (`dsh.hooks` says why).

A failure after step 4 closes the new plugin's scope before raising.
`PluginLoader.load_class(cls, name=...)` runs steps 3-5 for a class that no
entry point names (what `dsh.testing.load_plugin` uses). `generation`
changes with every load and unload, so callers can cache what the loaded
plugins contribute (the Host's client modules).

Unloading unregisters the plugin's hooks (no new agent is published to it),
then closes its scope: every installation it made in every agent unwinds and
its in-flight work is awaited. Nothing durable is touched.

`check_plugins(specs)` runs steps 1-3 without starting anything: what `dsh
web` checks before its server starts and `dsh plugins --overlay` reports.

Modules: `discovery` (entry points, matching specs), `loading` (`PluginLoader`,
`check_plugins`), `errors`. The overlay format itself is `dsh.overlay`.
"""

from __future__ import annotations

from ..errors import (
    AmbiguousPlugin,
    MissingPlugin,
    PluginConfigError,
    PluginError,
    PluginLoadError,
    PluginNotLoaded,
    PluginProblems,
    PluginUnloadError,
)
from ..overlay import Overlay, PluginSpec
from .discovery import (
    ENTRY_POINT_GROUP,
    InstalledPlugin,
    conventional_distribution,
    discover_plugins,
    missing_plugins,
    resolve_plugins,
)
from .loading import ContextFactory, LoadedPlugin, PluginCheck, PluginLoader, check_plugins

__all__ = [
    "ENTRY_POINT_GROUP",
    "AmbiguousPlugin",
    "ContextFactory",
    "InstalledPlugin",
    "LoadedPlugin",
    "MissingPlugin",
    "Overlay",
    "PluginCheck",
    "PluginConfigError",
    "PluginError",
    "PluginLoadError",
    "PluginLoader",
    "PluginNotLoaded",
    "PluginProblems",
    "PluginSpec",
    "PluginUnloadError",
    "check_plugins",
    "conventional_distribution",
    "discover_plugins",
    "missing_plugins",
    "resolve_plugins",
]
