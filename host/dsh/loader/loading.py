"""Loading plugins into one Host, and unloading them.

See the package docstring (`dsh.loader`) for the steps and the guarantees.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pluggy
from pydantic import BaseModel, ValidationError

from ..errors import raise_errors
from ..overlay import PluginSpec, key_path
from ..plugins import PluginContext
from ..validation import describe, problems
from .discovery import InstalledPlugin, discover_plugins, missing_plugins, resolve_plugins
from .errors import PluginConfigError, PluginLoadError, PluginNotLoaded, PluginUnloadError

__all__ = ["ContextFactory", "LoadedPlugin", "PluginLoader"]

ContextFactory = Callable[[str, BaseModel | None], PluginContext]
"""`make_context(name, config)`: the Host builds one plugin's context."""


@dataclass(frozen=True, slots=True)
class LoadedPlugin:
    """A plugin instance loaded into one Host."""

    name: str
    distribution: str | None
    version: str | None
    instance: object
    context: PluginContext


class PluginLoader:
    """Loads overlay-enabled plugins into one Host's `PluginManager`, and unloads them.

    `make_context(name, config)` is called once per loaded plugin, after its
    config validated, and must return a fresh `PluginContext` whose scope
    belongs to the Host. `discover` lists what is installed (tests may pass
    their own).
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        make_context: ContextFactory,
        *,
        discover: Callable[[], Iterable[InstalledPlugin]] = discover_plugins,
    ) -> None:
        self._pm = pm
        self._make_context = make_context
        self._discover = discover
        self._loaded: dict[str, LoadedPlugin] = {}
        self._closed = False

    @property
    def loaded(self) -> Mapping[str, LoadedPlugin]:
        """Loaded plugins by name, oldest first (a read-only view)."""
        return MappingProxyType(self._loaded)

    def installed(self) -> tuple[InstalledPlugin, ...]:
        """What is installed right now (re-read on every call)."""
        return tuple(self._discover())

    def resolve(self, specs: Iterable[PluginSpec]) -> list[tuple[PluginSpec, InstalledPlugin]]:
        """Pair every spec with its entry point; raises `MissingPlugin` naming all missing ones."""
        installed = self.installed()
        pairs = resolve_plugins(specs, installed)
        error = missing_plugins(pairs, installed)
        if error is not None:
            raise error
        return [(spec, plugin) for spec, plugin in pairs if plugin is not None]

    async def load_all(self, specs: Iterable[PluginSpec]) -> list[LoadedPlugin]:
        """Load every plugin in `specs` (an overlay's `plugins`), in order.

        Checks first that all are installed (one `MissingPlugin` lists every
        missing one, and nothing is loaded). If a plugin fails to load, the
        ones this call loaded are unloaded again, newest first, before the
        error is raised.
        """
        loaded: list[LoadedPlugin] = []
        try:
            for spec, plugin in self.resolve(specs):
                loaded.append(await self._load(spec, plugin))
        except BaseException as error:
            for done in reversed(loaded):
                try:
                    await self._unload(done)
                except PluginUnloadError as unload_error:
                    error.add_note(f"while rolling back: {unload_error}")
            raise
        return loaded

    async def load(self, spec: PluginSpec) -> LoadedPlugin:
        """Load one plugin into this Host; `dsh.loader` lists every step.

        Raises `MissingPlugin`, `AmbiguousPlugin`, `PluginConfigError` or
        `PluginLoadError` (also when the name is already loaded here).
        """
        ((_, plugin),) = self.resolve([spec])
        return await self._load(spec, plugin)

    async def _load(self, spec: PluginSpec, plugin: InstalledPlugin) -> LoadedPlugin:
        if self._closed:
            raise PluginLoadError(spec.name, f"cannot load {spec.name!r}: the loader is closed")
        if spec.name in self._loaded:
            raise PluginLoadError(spec.name, f"plugin {spec.name!r} is already loaded")
        cls = _import_class(plugin)
        config = _validate_config(cls, spec, plugin)
        context = self._make_context(spec.name, config)
        try:
            instance = _instantiate(cls, context, plugin)
            self._register(instance, plugin)
        except BaseException as error:
            try:
                await context.scope.aclose()
            except Exception as close_error:
                error.add_note(f"closing the scope of {spec.name!r} failed too: {close_error!r}")
            raise
        loaded = LoadedPlugin(spec.name, plugin.distribution, plugin.version, instance, context)
        self._loaded[spec.name] = loaded
        return loaded

    def _register(self, instance: object, plugin: InstalledPlugin) -> None:
        what = f"plugin {plugin.name!r} ({plugin.label})"
        try:
            registered = self._pm.register(instance, name=plugin.name)
        except pluggy.PluginValidationError as error:
            raise PluginLoadError(plugin.name, f"{what} has an invalid hook: {error}") from error
        except ValueError as error:
            raise PluginLoadError(plugin.name, f"cannot register {what}: {error}") from error
        if registered is None:
            raise PluginLoadError(plugin.name, f"{what} is blocked in this plugin manager")
        unknown = _unknown_hooks(self._pm, instance)
        if unknown:
            self._pm.unregister(instance)
            raise PluginLoadError(
                plugin.name,
                f"{what} implements hooks that dsh does not define: {', '.join(unknown)} "
                "(mark a hook for a newer host with @dsh.hookimpl(optionalhook=True))",
            )

    async def unload(self, name: str) -> None:
        """Unregister plugin `name`'s hooks, then close its scope (awaiting its work).

        Raises `PluginNotLoaded` if it is not loaded here, and
        `PluginUnloadError` if a disposer failed (the plugin is unloaded anyway).
        """
        try:
            loaded = self._loaded[name]
        except KeyError:
            raise PluginNotLoaded(f"plugin {name!r} is not loaded") from None
        await self._unload(loaded)

    async def _unload(self, loaded: LoadedPlugin) -> None:
        self._loaded.pop(loaded.name, None)
        # Hooks go first: an agent published while the scope closes must not
        # reach a plugin that can no longer install anything.
        if self._pm.is_registered(loaded.instance):
            self._pm.unregister(loaded.instance)
        try:
            await loaded.context.scope.aclose()
        except Exception as error:
            raise PluginUnloadError(
                loaded.name, f"plugin {loaded.name!r} did not unload cleanly: {error}"
            ) from error

    async def aclose(self) -> None:
        """Unload every plugin, newest first; afterwards nothing more can be loaded.

        Every plugin is unloaded even if some fail; one failure is re-raised as
        is, several as an `ExceptionGroup`.
        """
        self._closed = True
        errors: list[PluginUnloadError] = []
        for loaded in reversed(list(self._loaded.values())):
            try:
                await self._unload(loaded)
            except PluginUnloadError as error:
                errors.append(error)
        raise_errors(errors, f"{len(errors)} plugins did not unload cleanly")


def _import_class(plugin: InstalledPlugin) -> type[Any]:
    what = f"plugin {plugin.name!r} ({plugin.label}, {plugin.target})"
    try:
        target = plugin.entry_point.load()
    except Exception as error:
        raise PluginLoadError(
            plugin.name, f"cannot import {what}: {type(error).__name__}: {error}"
        ) from error
    if not inspect.isclass(target):
        raise PluginLoadError(
            plugin.name, f"{what} must name a class, not {type(target).__name__} {target!r}"
        )
    return target


def _validate_config(cls: type[Any], spec: PluginSpec, plugin: InstalledPlugin) -> BaseModel | None:
    where = f"{spec.source}: " if spec.source is not None else ""
    table = f"plugins.{key_path((spec.name,))}"
    model = getattr(cls, "Config", None)
    if model is None:
        if spec.config:
            keys = [f"{table}.{key_path((key,))}" for key in spec.config]
            raise PluginConfigError(
                spec.name,
                f"{where}plugin {spec.name!r} takes no configuration, but the overlay sets "
                + ", ".join(keys),
                keys,
            )
        return None
    if not (inspect.isclass(model) and issubclass(model, BaseModel)):
        raise PluginLoadError(
            spec.name,
            f"plugin {spec.name!r} ({plugin.label}): its Config must be a pydantic model class",
        )
    if model.model_config.get("extra") != "forbid":
        raise PluginLoadError(
            spec.name,
            f"plugin {spec.name!r} ({plugin.label}): its Config must forbid extra keys "
            "(model_config = ConfigDict(extra='forbid')) so that overlay typos are errors",
        )
    try:
        return model.model_validate(dict(spec.config), strict=True)
    except ValidationError as error:
        found = problems(error, location=lambda loc: f"{table}.{key_path(loc)}")
        fields = [item.where for item in found]
        raise PluginConfigError(
            spec.name,
            f"{where}invalid config for plugin {spec.name!r}: "
            + describe(error, location=lambda loc: f"{table}.{key_path(loc)}"),
            fields,
        ) from error


def _instantiate(cls: type[Any], context: PluginContext, plugin: InstalledPlugin) -> object:
    try:
        instance: object = cls(context)
    except Exception as error:
        raise PluginLoadError(
            plugin.name,
            f"plugin {plugin.name!r} ({plugin.label}) failed to start: "
            f"{type(error).__name__}: {error}",
        ) from error
    return instance


def _unknown_hooks(pm: pluggy.PluginManager, instance: object) -> list[str]:
    return sorted(
        caller.name
        for caller in pm.get_hookcallers(instance) or ()
        if caller.spec is None
        and any(
            impl.plugin is instance and not impl.optionalhook for impl in caller.get_hookimpls()
        )
    )
