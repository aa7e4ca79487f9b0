"""What a plugin receives from the host, and what it may hand back.

An entry point in the `dsh.plugins` group names a plugin *class*. The loader
instantiates it once per Host as `cls(context)`, where `context` is a
`PluginContext`. If the class has a `Config` attribute (a pydantic model), the
overlay's table for the plugin is validated by it and passed as
`context.config`; otherwise the table must be empty and `context.config` is
None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from pydantic import BaseModel, JsonValue

from ..attention.feed import AlertFeed, AlertSink
from ..base.clock import Clock
from ..base.deprecation import deprecated
from ..base.metrics import Metrics
from ..base.scope import Scope
from ..persistence.location import StorageLocation
from ..session.live import LiveSessions

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ..agents.agent import Agent

__all__ = ["ClientModule", "PluginContext", "SessionActionRunner"]


@dataclass(frozen=True, slots=True)
class ClientModule:
    """A browser ES module shipped by a UI plugin.

    `path` is the module file on disk (package data); the host serves it under
    `/plugins/<plugin>/<path.name>`. `event_types` names the durable event types
    whose views it renders. `imports` are further ES module files the module
    imports by relative URL (`import { x } from "./words.js"`): each is served
    next to it, under `/plugins/<plugin>/<name>`, but not listed in
    `/api/client-modules` (only `path` is imported and registered). Nothing
    else of the plugin's folder is served.
    """

    path: Path
    event_types: Sequence[str] = field(default_factory=tuple)
    imports: Sequence[Path] = field(default_factory=tuple)


class SessionActionRunner(Protocol):
    """`run(session_id, plugin, action, args)`: a person's action on a Session, as
    `POST /api/sessions/{id}/actions` runs it (resumed first when closed, relayed to the
    host it is live on); its JSON result, or a `dsh.ActionError`."""

    async def run(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue: ...


class _Detached:
    """The feed and the actions of a context built without a Host (a unit test's)."""

    def subscribe(self, sink: AlertSink, *, scope: Scope) -> None:
        return None

    async def read(self, session_id: str, through_seq: int) -> int:
        raise RuntimeError("this plugin context has no Host: there are no alerts to read")

    async def run(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        raise RuntimeError("this plugin context has no Host: there are no Sessions to act on")


ConfigT = TypeVar("ConfigT", bound="BaseModel | None", covariant=True)


@dataclass(frozen=True, slots=True)
class PluginContext(Generic[ConfigT]):
    """The host's gifts to one plugin instance.

    Generic over the plugin's config: a plugin class with `Config = MyConfig`
    takes a `PluginContext[MyConfig]`, whose `config` is always a validated
    `MyConfig` (its defaults when the overlay's table is empty); a plugin
    without `Config` takes a `PluginContext[None]`.

    - `name`: the plugin's entry-point name (what the overlay calls it);
    - `scope`: closes when the plugin unloads (or the Host closes);
    - `live`, `clock`: the Host's live Sessions and clock; `group`: the Host's task
      group (prefer `agent.tasks` for work that belongs to one agent);
    - `wakes_cold_sessions`: True when the Host wakes a closed Session at the
      time a plugin asked for (`[host] wake_cold_sessions`): what a plugin
      tells a person about when its work happens must say so;
    - `metrics`: the Host's `Metrics` (`GET /metrics`); register into it with
      `scope=` this plugin's scope (or an installation's), so that unloading
      takes the plugin's metrics off the page;
    - `storage`: where the Host keeps its Sessions (`dsh.StorageLocation`), for
      records a plugin keeps beside them;
    - `alerts`: the alerts the Host finds (`dsh.AlertFeed`: subscribe before
      they are recorded, mark them read);
    - `actions`: run a person's action on a Session (`SessionActionRunner`),
      as the page's actions API does.

    `store` is the second edition's name of `live` (deprecated).
    """

    name: str
    config: ConfigT
    scope: Scope
    live: LiveSessions
    clock: Clock
    group: TaskGroup
    wakes_cold_sessions: bool = False
    metrics: Metrics = field(default_factory=Metrics)
    storage: StorageLocation = field(default_factory=StorageLocation)
    alerts: AlertFeed = field(default_factory=_Detached)
    actions: SessionActionRunner = field(default_factory=_Detached)

    @property
    def store(self) -> LiveSessions:
        deprecated("PluginContext.store", "PluginContext.live")
        return self.live

    def install(self, agent: Agent) -> Scope:
        """An installation scope for `agent`: closes when the agent or this plugin closes."""
        return Scope.joint(agent.scope, self.scope, name=f"{self.name} in {agent.session.id}")
