"""What a plugin receives from the host, and what it may hand back.

An entry point in the `dsh.plugins` group names a plugin *class*. The loader
instantiates it once per Host as `cls(context)`, where `context` is a
`PluginContext`. If the class has a `Config` attribute (a pydantic model), the
overlay's table for the plugin is validated by it and passed as
`context.config`; otherwise the table must be empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .clock import Clock
from .scope import Scope
from .store import SessionStore

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .agent import Agent

__all__ = ["ClientModule", "PluginContext"]


@dataclass(frozen=True, slots=True)
class ClientModule:
    """A browser ES module shipped by a UI plugin.

    `path` is the module file on disk (package data); the host serves it under
    `/plugins/<plugin>/<path.name>`. `event_types` names the durable event types
    whose views it renders.
    """

    path: Path
    event_types: Sequence[str] = field(default_factory=tuple)


@dataclass(slots=True)
class PluginContext:
    """The host's gifts to one plugin instance."""

    name: str
    config: BaseModel | None
    scope: Scope
    store: SessionStore
    clock: Clock
    group: TaskGroup

    def install(self, agent: Agent) -> Scope:
        """An installation scope for `agent`: closes when the agent or this plugin closes."""
        return Scope.joint(agent.scope, self.scope, name=f"{self.name} in {agent.session.id}")
