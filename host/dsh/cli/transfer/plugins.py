"""The plugins' own records in `dsh store copy`: each plugin copies what it keeps beside the
Sessions (`dsh_store_copy`).

1. **Which plugins**: those of the overlay `--overlay` names, else of the one the
   source data dir remembers (`overlay.path`, kept by `dsh web`). Without
   either, none: the command says so, since a plugin's records (dsh-notify's
   outbox, its Web Push key) would then stay behind.
2. **How**: they are loaded into a Host that runs nothing (its own storage
   in memory, no model), as for plugin commands; each plugin implementing the
   hook is asked in turn with the two stores' locations and its answer
   awaited. Its line, if any, is for the person.
3. **A failure stops the copy** naming the plugin (the hook's failures are
   not contained): what was copied stays, and the copy continues when run
   again.
"""

from __future__ import annotations

import inspect

from ...host.host import Host
from ...models.absent import AbsentModel
from ...persistence.location import StorageLocation
from ...persistence.memory import MemoryBackend
from ...plugins.overlay import Overlay

__all__ = ["PluginRecordsError", "copy_plugin_records"]

HOOK = "dsh_store_copy"


class PluginRecordsError(Exception):
    """A plugin could not copy its own records (the message names it and why)."""


async def copy_plugin_records(
    overlay: Overlay, source: StorageLocation, target: StorageLocation
) -> list[str]:
    """What each of the overlay's plugins said it copied (see the module docstring)."""
    if not overlay.plugins:
        return []
    said: list[str] = []
    async with Host(backend=MemoryBackend(), model=AbsentModel(), plugins=overlay.plugins) as host:
        for plugin in host.hooks.implementers(HOOK):
            try:
                answer = host.hooks.call(plugin, HOOK, {"source": source, "target": target})
                line = await answer if inspect.isawaitable(answer) else answer
            except Exception as error:
                raise PluginRecordsError(
                    f"plugin {plugin!r} could not copy its own records: {error}"
                ) from error
            if isinstance(line, str) and line.strip():
                said.append(line.strip())
    return said
