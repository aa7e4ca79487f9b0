"""The one check of an overlay's plugins: what `dsh web` and `dsh plugins --overlay` both run.

`check_plugins(specs)` is, in order:

1. the loader's checks (`dsh.plugins.loader.check_plugins`): every entry
   point resolves, imports to a class whose hooks register and whose config
   table validates — nothing is instantiated;
2. a trial load of the plugins that passed, in a scratch Host of their own
   (in-memory storage, no model, nothing shared with any other Host): each is
   instantiated through the same loader as in production (a constructor that
   raises is refused here, not when the server starts), then one probe agent
   is published to them one at a time, in hook order, so a tool name that
   two plugins both register is refused naming both. The scratch Host is
   closed before this returns: every plugin unloads, nothing is stored.

A hook that raises for the probe agent for any other reason is not refused
(a running Host contains and logs such failures, so refusing here would
make the two commands disagree). Nothing here runs inside an event loop:
both callers check before theirs starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import anyio

from ..agents.errors import DuplicateTool
from ..models.absent import AbsentModel
from ..persistence.memory import MemoryBackend
from ..plugins.errors import PluginLoadError
from ..plugins.loader import InstalledPlugin, PluginCheck, PluginSpec
from ..plugins.loader import check_plugins as loader_checks
from .host import Host

__all__ = ["check_plugins"]

_PUBLISHED = "dsh_agent_published"


def check_plugins(
    specs: Iterable[PluginSpec], installed: Iterable[InstalledPlugin] | None = None
) -> list[PluginCheck]:
    """One `PluginCheck` per spec, in order (see the module docstring for what is checked)."""
    checks = loader_checks(specs, installed)
    ready = [check.spec for check in checks if check.problem is None]
    if not ready:
        return checks
    found = anyio.run(_trial_load, ready)
    return [
        replace(check, problem=found[check.spec.name], warnings=())
        if check.spec.name in found
        else check
        for check in checks
    ]


async def _trial_load(specs: Sequence[PluginSpec]) -> dict[str, PluginLoadError]:
    problems: dict[str, PluginLoadError] = {}
    async with Host(backend=MemoryBackend(), model=AbsentModel(), cwd="/") as host:
        agent = await host.create_session(origin="api")
        for spec in specs:
            try:
                await host.loader.load(spec)
            except PluginLoadError as error:
                problems[spec.name] = error
        owners: dict[str, str] = {}
        for plugin in host.hooks.implementers(_PUBLISHED):
            before = set(agent.tools.names())
            refused: DuplicateTool | None = None
            try:
                host.hooks.call(plugin, _PUBLISHED, {"agent": agent})
            except DuplicateTool as error:
                refused = error
            except Exception:  # contained (and logged) by a running Host too
                pass
            for tool in set(agent.tools.names()) - before:
                owners.setdefault(tool, plugin)
            if refused is not None:
                problems[plugin] = _duplicate(plugin, refused, owners)
    return problems


def _duplicate(plugin: str, error: DuplicateTool, owners: dict[str, str]) -> PluginLoadError:
    owner = owners.get(error.tool or "")
    if owner == plugin:
        twice = f"plugin {plugin!r} registers a tool named {error.tool!r} twice"
        return PluginLoadError(plugin, f"{twice}: an agent's tool names are unique")
    other = f"plugin {owner!r}" if owner is not None else "another tool"
    return PluginLoadError(
        plugin,
        f"plugin {plugin!r} registers a tool named {error.tool!r}, which {other} registers "
        "too: an agent's tool names are unique, so one of the two must be renamed or "
        "left out of the overlay",
    )
