"""A Host for plugin tests, and loading a plugin into it.

    async with running_host(model=FakeModel([...])) as host:
        plugin, unload = await load_plugin(host, EchoPlugin, config={"roots_only": False})
        agent = await host.create_session()
        agent.submit("say hi")
        await settled(agent)
        ...
        await unload()          # what unloading the plugin does: every installation unwinds

`running_host()` is a real `Host` (live Sessions, persistence, loader, hooks) on
in-memory storage (or the `backend` you give, e.g. a `FaultyBackend`), with
a `FakeClock` unless you pass a clock and a `FakeModel` with an empty script
unless you pass a model. `load_plugin()` loads a plugin class (no entry
point needed) or an installed entry point by name, through the same steps as
an overlay: its config table is validated by its `Config`, it gets its own
`PluginContext`, and its hooks are checked (an unknown hook or a wrapper is a
`PluginLoadError`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar, overload

import anyio

from ..agents.agent import Agent
from ..base.clock import Clock
from ..base.deprecation import deprecated
from ..host.host import Host
from ..models.base import ModelAdapter
from ..persistence.backend import Backend
from ..persistence.memory import MemoryBackend
from ..plugins.loader import PluginSpec, discover_plugins
from ..wake import WakeBackend
from .clock import FakeClock
from .model import FakeModel

__all__ = ["Unload", "load_plugin", "running_host", "settled"]

P = TypeVar("P")
Unload = Callable[[], Awaitable[None]]
"""Unloads the plugin: its hooks go, every installation it made unwinds (awaited)."""

DEADLINE = 5.0


@asynccontextmanager
async def running_host(
    *,
    model: ModelAdapter | None = None,
    clock: Clock | None = None,
    backend: Backend | None = None,
    plugins: Sequence[PluginSpec] = (),
    cwd: str = "/dsh-test",
    wake_backend: WakeBackend | None = None,
    idle_seconds: float | None = None,
    wake_store: WakeBackend | None = None,
) -> AsyncIterator[Host]:
    """A running test `Host` (see the module docstring); closed on exit.

    `wake_backend` turns on waking cold Sessions (`dsh.testing.MemoryWakeBackend()`
    keeps the index in memory), `idle_seconds` hibernation; both are off by
    default. `wake_store` is the second edition's name of `wake_backend` (deprecated).
    """
    if wake_store is not None:
        deprecated("running_host(wake_store=...)", "running_host(wake_backend=...)")
        wake_backend = wake_backend if wake_backend is not None else wake_store
    host = Host(
        backend=backend if backend is not None else MemoryBackend(),
        model=model if model is not None else FakeModel(),
        clock=clock if clock is not None else FakeClock(),
        plugins=plugins,
        cwd=cwd,
        wake_backend=wake_backend,
        idle_seconds=idle_seconds,
    )
    async with host:
        yield host


@overload
async def load_plugin(
    host: Host,
    plugin: type[P],
    *,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[P, Unload]: ...


@overload
async def load_plugin(
    host: Host,
    plugin: str,
    *,
    name: None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[object, Unload]: ...


async def load_plugin(
    host: Host,
    plugin: type[Any] | str,
    *,
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[Any, Unload]:
    """Load `plugin` into `host`; returns the instance and the disposer that unloads it.

    `plugin` is a plugin class or the entry-point name of an installed plugin
    (`"tool-schedule"`). A class loads under `name`; by default under the
    name production gives it: the entry-point name of an installed entry
    point that names this class, else the class name.
    `config` is the plugin's overlay table. Raises what loading an overlay
    raises (`PluginConfigError`, `PluginLoadError`, `MissingPlugin`).
    """
    if isinstance(plugin, str):
        if name is not None:
            raise TypeError("an installed plugin loads under its entry-point name; drop name=")
        loaded = await host.loader.load(PluginSpec(name=plugin, config=dict(config or {})))
    else:
        name = name or _entry_point_name(plugin) or plugin.__name__
        loaded = await host.loader.load_class(plugin, name=name, config=config)

    async def unload() -> None:
        await host.loader.unload(loaded.name)

    return loaded.instance, unload


def _entry_point_name(cls: type[Any]) -> str | None:
    """The name of the installed `dsh.plugins` entry point that names `cls` (metadata only)."""
    target = f"{cls.__module__}:{cls.__qualname__}"
    names = [plugin.name for plugin in discover_plugins() if plugin.target.strip() == target]
    return names[0] if len(names) == 1 else None


async def settled(agent: Agent) -> None:
    """Return once `agent` is idle with no input queued (`TimeoutError` after 5 s).

    Wrap it in your own `anyio.fail_after(...)` for a shorter deadline.
    """
    with anyio.fail_after(DEADLINE):
        while agent.pending or agent.phase != "idle":
            await agent.when_idle()
