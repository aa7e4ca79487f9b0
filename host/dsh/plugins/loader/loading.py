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

from ...base.errors import raise_errors
from ...base.validation import describe, key_path, problems
from .. import hookspecs
from ..context import PluginContext
from ..errors import (
    AmbiguousPlugin,
    PluginConfigError,
    PluginLoadError,
    PluginNotLoaded,
    PluginUnloadError,
)
from ..hooks import wrapper_hooks
from ..overlay import PluginSpec
from .discovery import InstalledPlugin, discover_plugins, missing_plugins, resolve_plugins

__all__ = [
    "ContextFactory",
    "LoadedPlugin",
    "PluginCheck",
    "PluginLoader",
    "check_plugins",
    "register_checked",
]

ContextFactory = Callable[[str, BaseModel | None], PluginContext[Any]]
"""`make_context(name, config)`: the Host builds one plugin's context."""


@dataclass(frozen=True, slots=True)
class LoadedPlugin:
    """A plugin instance loaded into one Host."""

    name: str
    distribution: str | None
    version: str | None
    instance: object
    context: PluginContext[Any]


@dataclass(frozen=True, slots=True)
class PluginCheck:
    """What loading one overlay entry would meet: its entry point (None when it is
    missing or ambiguous), the error loading it would raise (None: none found)
    and what is odd but allowed (`warnings`: a plugin that implements no hook)."""

    spec: PluginSpec
    plugin: InstalledPlugin | None
    problem: PluginLoadError | None
    warnings: tuple[str, ...] = ()


def check_plugins(
    specs: Iterable[PluginSpec], installed: Iterable[InstalledPlugin] | None = None
) -> list[PluginCheck]:
    """Check `specs` (an overlay's plugins) the way loading them checks, short of starting any.

    Through the same functions `PluginLoader` uses: resolve each entry point
    (`MissingPlugin`, `AmbiguousPlugin`), import its class, validate its
    config table (`PluginConfigError`), and check its hooks the way
    registering its instance does (a bad signature, a hook dsh does not
    define, a wrapper: `PluginLoadError`) by registering the class itself in
    a scratch plugin manager. No plugin is instantiated. A class that
    implements no hook loads but contributes nothing: a warning. One
    `PluginCheck` per spec, in order. `dsh.host.check_plugins` adds a trial
    load to this; `dsh web` and `dsh plugins --overlay` both run that.
    """
    available = tuple(discover_plugins() if installed is None else installed)
    checks: list[PluginCheck] = []
    for spec in specs:
        try:
            ((_, plugin),) = resolve_plugins([spec], available)
        except AmbiguousPlugin as error:
            checks.append(PluginCheck(spec, None, error))
            continue
        if plugin is None:
            checks.append(PluginCheck(spec, None, missing_plugins([(spec, None)], available)))
            continue
        try:
            warnings = _check_class(_import_class(plugin), spec, plugin.label)
        except PluginLoadError as error:
            checks.append(PluginCheck(spec, plugin, error))
        else:
            checks.append(PluginCheck(spec, plugin, None, warnings))
    return checks


def _check_class(cls: type[Any], spec: PluginSpec, label: str) -> tuple[str, ...]:
    """Raise what loading `cls` as `spec` would, short of instantiating it; return warnings."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    # pluggy reads the hook markers off the class's functions as it would off
    # an instance's methods (and leaves out `self`), so the class stands in.
    register_checked(pm, cls, spec.name, label)
    implemented = bool(pm.get_hookcallers(cls))
    _validate_config(cls, spec, label, is_plugin=implemented)
    if implemented:
        return ()
    return (
        f"plugin {spec.name!r} ({label}) implements no dsh hook, so it contributes "
        "nothing; mark its hook methods with @dsh.hookimpl",
    )


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
        self._generation = 0

    @property
    def generation(self) -> int:
        """A number that changes whenever a plugin is loaded or unloaded (for caches)."""
        return self._generation

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

    async def load_class(
        self, cls: type[Any], *, name: str, config: Mapping[str, Any] | None = None
    ) -> LoadedPlugin:
        """Load plugin class `cls` under `name`, as if an entry point named it (for tests).

        Every step after the import is the same as for an installed plugin:
        the config table is validated by `cls.Config`, the instance gets its
        own context and scope, and its hooks are checked when it registers.
        """
        if not inspect.isclass(cls):
            raise TypeError(f"expected a plugin class, got {type(cls).__name__} {cls!r}")
        spec = PluginSpec(name=name, config=MappingProxyType(dict(config or {})))
        label = f"class {cls.__module__}.{cls.__qualname__}"
        return await self._start(spec, cls, label, distribution=None, version=None)

    async def _load(self, spec: PluginSpec, plugin: InstalledPlugin) -> LoadedPlugin:
        self._check_loadable(spec.name)
        cls = _import_class(plugin)
        return await self._start(
            spec, cls, plugin.label, distribution=plugin.distribution, version=plugin.version
        )

    def _check_loadable(self, name: str) -> None:
        if self._closed:
            raise PluginLoadError(name, f"cannot load {name!r}: the loader is closed")
        if name in self._loaded:
            raise PluginLoadError(name, f"plugin {name!r} is already loaded")

    async def _start(
        self,
        spec: PluginSpec,
        cls: type[Any],
        label: str,
        *,
        distribution: str | None,
        version: str | None,
    ) -> LoadedPlugin:
        self._check_loadable(spec.name)
        config = _validate_config(cls, spec, label)
        context = self._make_context(spec.name, config)
        try:
            instance = _instantiate(cls, context, spec.name, label)
            self._register(instance, spec.name, label)
        except BaseException as error:
            try:
                await context.scope.aclose()
            except Exception as close_error:
                error.add_note(f"closing the scope of {spec.name!r} failed too: {close_error!r}")
            raise
        loaded = LoadedPlugin(spec.name, distribution, version, instance, context)
        self._loaded[spec.name] = loaded
        self._generation += 1
        return loaded

    def _register(self, instance: object, name: str, label: str) -> None:
        register_checked(self._pm, instance, name, label)

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
        self._generation += 1
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


def register_checked(pm: pluggy.PluginManager, plugin: object, name: str, label: str) -> None:
    """Register `plugin` in `pm` under `name`, refusing what dsh does not run.

    Raises `PluginLoadError` (and leaves `pm` without the plugin) for a hook
    whose signature does not match its spec, a hook that matches no `dsh`
    spec (unless `optionalhook=True`) and a hook wrapper (`dsh.hooks` says why).
    """
    what = f"plugin {name!r} ({label})"
    try:
        registered = pm.register(plugin, name=name)
    except pluggy.PluginValidationError as error:
        raise PluginLoadError(name, f"{what} has an invalid hook: {error}") from error
    except ValueError as error:
        raise PluginLoadError(name, f"cannot register {what}: {error}") from error
    if registered is None:
        raise PluginLoadError(name, f"{what} is blocked in this plugin manager")
    unknown = _unknown_hooks(pm, plugin)
    if unknown:
        pm.unregister(plugin)
        raise PluginLoadError(
            name,
            f"{what} implements hooks that dsh does not define: {', '.join(unknown)} "
            "(mark a hook for a newer host with @dsh.hookimpl(optionalhook=True))",
        )
    wrappers = wrapper_hooks(pm, plugin)
    if wrappers:
        pm.unregister(plugin)
        raise PluginLoadError(
            name,
            f"{what} implements {', '.join(wrappers)} as a hook wrapper, which dsh "
            "refuses: the host calls each plugin's implementation on its own, so that "
            "one failing plugin cannot hide the others, and leaves a wrapper nothing to "
            "wrap. Implement it as a plain hook (tryfirst/trylast set its order)",
        )


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


def _validate_config(
    cls: type[Any], spec: PluginSpec, label: str, *, is_plugin: bool = True
) -> BaseModel | None:
    where = f"{spec.source}: " if spec.source is not None else ""
    table = f"plugins.{key_path((spec.name,))}"
    model = getattr(cls, "Config", None)
    if model is None:
        if spec.config:
            keys = [f"{table}.{key_path((key,))}" for key in spec.config]
            if not is_plugin:
                raise PluginConfigError(
                    spec.name,
                    f"{where}plugin {spec.name!r} ({label}) names class "
                    f"{cls.__module__}.{cls.__qualname__}, which is not a dsh plugin: it "
                    "implements no dsh hook and has no Config, so nothing reads "
                    f"{', '.join(keys)}; does the entry point name the right class?",
                    keys,
                )
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
            f"plugin {spec.name!r} ({label}): its Config must be a pydantic model class",
        )
    if model.model_config.get("extra") != "forbid":
        raise PluginLoadError(
            spec.name,
            f"plugin {spec.name!r} ({label}): its Config must forbid extra keys "
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


def _instantiate(cls: type[Any], context: PluginContext[Any], name: str, label: str) -> object:
    try:
        instance: object = cls(context)
    except Exception as error:
        raise PluginLoadError(
            name, f"plugin {name!r} ({label}) failed to start: {type(error).__name__}: {error}"
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
