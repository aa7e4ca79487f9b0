"""`Contributions`: what the loaded plugins say about a log, an event or the host.

Every hook the host asks on a Session's behalf goes through here, once,
through the one caller (`dsh.plugins.hooks.Hooks`: pluggy's order, failures
contained per plugin as each hookspec says). Each method takes a log (or an
event of one) and answers for it; a Session named only by its id is the
catalogue's to read (`dsh.host.catalogue`), which then asks here.

- `publish(agent)` — `dsh_agent_published`, once per agent going live;
- `view(log, event)` — the first plugin view of a durable event;
- `alert(log, event)` — what the first plugin says a durable event means
  to a person (`dsh.attention`);
- `states(log)`, `summaries(session, durable)`, `wake_at(log)` — every
  plugin's state, compact list summary and wake time of a log;
- `problems(log)` — why plugins could not use a log brought in from outside;
- `client_modules()` — the browser modules the plugins ship;
- `web_routes()`, `health()` — the HTTP routes they serve and what they add
  to `GET /api/health`;
- `model_choices()`, `demo_skills()` — the model adapters they offer, and
  what they teach the demo model;
- `cli_commands(register_for, on_error)` — the `dsh` subcommands they add.

`client_modules`, `web_routes`, `demo_skills` and `summaries` are computed once per set of loaded
plugins (and, for a summary, per durable length of a live Session object),
not per request: `generation` names that set.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from pydantic import JsonValue, ValidationError
from starlette.routing import BaseRoute

from ..agents.agent import Agent
from ..agents.tools import registering_as
from ..attention.alert import AlertContent
from ..base.jsontypes import to_json
from ..base.validation import describe
from ..models.demo import DemoSkill
from ..models.registry import ModelChoice, ModelRegistrations
from ..persistence.errors import StorageError
from ..session.event import SessionEvent
from ..session.log import Session, SessionLog
from .context import ClientModule
from .hooks import ErrorHandler, Hooks
from .hookspecs import RegisterCommand
from .loader import PluginLoader

__all__ = ["Contributions", "PublishedModule"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishedModule:
    """A browser module contributed by a loaded plugin."""

    plugin: str
    module: ClientModule


class Contributions:
    """The plugins' answers for one Host (see the module docstring).

    `loader()` is the Host's plugin loader (None before the Host starts):
    its generation changes whenever the loaded plugins do; the implementers
    of a hook are part of every cache key too, so plugins a test registers
    with the manager by hand count as well. It also says where a plugin
    ships, for log lines.
    """

    def __init__(self, hooks: Hooks, loader: Callable[[], PluginLoader | None]) -> None:
        self.hooks = hooks
        self._loader = loader
        self._modules: tuple[object, list[PublishedModule]] | None = None
        self._skills: tuple[object, list[DemoSkill]] | None = None
        self._routes: tuple[object, list[BaseRoute]] | None = None
        # The compact summaries of a live Session object, with what they were
        # computed for: (durable length, (loader generation, implementers)).
        self._summaries: weakref.WeakKeyDictionary[
            Session, tuple[tuple[int, object], dict[str, JsonValue]]
        ] = weakref.WeakKeyDictionary()

    def _generation(self) -> int:
        loader = self._loader()
        return -1 if loader is None else loader.generation

    def _label(self, plugin: str) -> str:
        """`plugin 'x' (dsh-x 1.0)`: a loaded plugin and where it ships, for log lines."""
        loader = self._loader()
        loaded = None if loader is None else loader.loaded.get(plugin)
        if loaded is None or loaded.distribution is None:
            return f"plugin {plugin!r}"
        return f"plugin {plugin!r} ({loaded.distribution} {loaded.version})"

    def _plugins(self, hook: str) -> object:
        return (self._generation(), tuple(self.hooks.implementers(hook)))

    def publish(self, agent: Agent) -> None:
        """Tell every plugin that `agent` is live (`dsh_agent_published`).

        Each plugin runs inside `registering_as(label)`, so the tools it
        registers are stamped with it (a failing tool's log line names it).
        """
        self.hooks.each(
            "dsh_agent_published",
            {"agent": agent},
            about=f"for session {agent.session.id}",
            around=lambda plugin: registering_as(self._label(plugin)),
        )

    def view(self, log: SessionLog, event: SessionEvent) -> dict[str, JsonValue] | None:
        """The first plugin view of a durable event, or None (`dsh_event_view`).

        `log` is the live Session (on the event loop), or a cold `StoredLog`
        (then this runs in a worker thread; see `dsh_event_view`).
        """
        found = self.hooks.first(
            "dsh_event_view",
            {"session": log, "event": event},
            convert=_json_object,
            about=f"for session {log.id} seq {event.seq}",
        )
        return None if found is None else found.value

    def alert(self, log: SessionLog, event: SessionEvent) -> AlertContent | None:
        """What the first plugin says a durable event means to a person (`dsh_session_alert`)."""
        found = self.hooks.first(
            "dsh_session_alert",
            {"session": log, "event": event},
            convert=_alert,
            about=f"for session {log.id} seq {event.seq}",
        )
        return None if found is None else found.value

    def states(self, log: SessionLog) -> dict[str, JsonValue]:
        """Every plugin's state of `log`'s Session, keyed by plugin name (`dsh_session_state`).

        `log` must hold only durable events; plugins returning None are left out.
        """
        states = self.hooks.each(
            "dsh_session_state", {"session": log}, convert=_json, about=f"for session {log.id}"
        )
        return {contribution.plugin: contribution.value for contribution in states}

    def summaries(self, session: Session, durable: int) -> dict[str, JsonValue]:
        """The plugins' `dsh_session_summary` of live `session`'s first `durable` events,
        computed once per durable length and set of loaded plugins."""
        key = (durable, self._plugins("dsh_session_summary"))
        held = self._summaries.get(session)
        if held is not None and held[0] == key:
            return held[1]
        log_ = session.prefix(durable)
        summaries = self.hooks.each(
            "dsh_session_summary", {"session": log_}, convert=_json, about=f"for session {log_.id}"
        )
        compact = {contribution.plugin: contribution.value for contribution in summaries}
        self._summaries[session] = (key, compact)
        return compact

    def wake_at(self, log: SessionLog) -> int | None:
        """When (epoch ms) a plugin first wants `log`'s Session live (`dsh_session_wake_at`).

        A plugin that fails counts as None, except when what failed is reading
        the log (a `StorageError` from a cold log): then no answer is known, and
        that error is raised once every plugin was asked.
        """
        unreadable: list[StorageError] = []

        def failed(plugin: str, hook: str, error: Exception) -> None:
            if isinstance(error, StorageError):
                unreadable.append(error)
            else:
                logger.error(
                    "plugin %s failed in %s for session %s", plugin, hook, log_id, exc_info=error
                )

        log_id = log.id
        times = self.hooks.each(
            "dsh_session_wake_at",
            {"session": log},
            convert=_epoch_ms,
            about=f"for session {log_id}",
            on_error=failed,
        )
        if unreadable:
            raise unreadable[0]
        return min((contribution.value for contribution in times), default=None)

    def problems(self, log: SessionLog) -> dict[str, str]:
        """Why each plugin could not use `log` (`dsh_session_check`), keyed by plugin name;
        empty when every plugin can. A plugin that failed to check counts as a problem."""
        problems: dict[str, str] = {}

        def failed(plugin: str, hook: str, error: Exception) -> None:
            problems[plugin] = f"it failed to check the log: {type(error).__name__}: {error}"

        def sentence(plugin: str, value: object) -> str:
            if not isinstance(value, str):
                problems[plugin] = f"it answered {value!r}, not a sentence or None"
                raise TypeError("not a string")
            return value

        found = self.hooks.each(
            "dsh_session_check",
            {"session": log},
            convert=sentence,
            about=f"for session {log.id}",
            on_error=failed,
        )
        problems.update((contribution.plugin, contribution.value) for contribution in found)
        return dict(sorted(problems.items()))

    def client_modules(self) -> list[PublishedModule]:
        """Browser modules from every loaded plugin, in call order (`dsh_client_modules`)."""
        key = self._plugins("dsh_client_modules")
        if self._modules is None or self._modules[0] != key:
            self._modules = (key, self._collect_modules())
        return list(self._modules[1])

    def _collect_modules(self) -> list[PublishedModule]:
        modules: list[PublishedModule] = []
        for contribution in self.hooks.each("dsh_client_modules", {}):
            for module in contribution.value or ():
                if isinstance(module, ClientModule):
                    modules.append(PublishedModule(contribution.plugin, module))
                else:
                    logger.error(
                        "plugin %s returned %r from dsh_client_modules; expected ClientModule",
                        contribution.plugin,
                        module,
                    )
        return modules

    def web_routes(self) -> list[BaseRoute]:
        """HTTP routes from every loaded plugin, in call order (`dsh_web_routes`)."""
        key = self._plugins("dsh_web_routes")
        if self._routes is None or self._routes[0] != key:
            self._routes = (key, self._collect_routes())
        return list(self._routes[1])

    def _collect_routes(self) -> list[BaseRoute]:
        routes: list[BaseRoute] = []
        for contribution in self.hooks.each("dsh_web_routes", {}):
            for route in contribution.value or ():
                if isinstance(route, BaseRoute):
                    routes.append(route)
                else:
                    logger.error(
                        "%s returned %r from dsh_web_routes; expected a Starlette route",
                        self._label(contribution.plugin),
                        route,
                    )
        return routes

    def health(self, taken: Collection[str]) -> dict[str, JsonValue]:
        """What the plugins add to `GET /api/health` (`dsh_health`); keys in `taken`
        (the host's own) and keys an earlier plugin gave are left out, and logged."""
        report: dict[str, JsonValue] = {}
        for contribution in self.hooks.each("dsh_health", {}, convert=_health_keys):
            for key, value in contribution.value.items():
                if key in taken or key in report:
                    logger.error(
                        "%s answered dsh_health with key %r, which is already taken (left out)",
                        self._label(contribution.plugin),
                        key,
                    )
                else:
                    report[key] = value
        return report

    def model_choices(self) -> Mapping[str, ModelChoice]:
        """The built-in model adapters, then those the plugins offer (`dsh_models`)."""
        registrations = ModelRegistrations()
        self.hooks.each(
            "dsh_models",
            lambda plugin: {"register": registrations.register_for(plugin)},
            on_error=registrations.failed,
        )
        return registrations.choices()

    def demo_skills(self) -> list[DemoSkill]:
        """What the loaded plugins teach the demo model, in call order (`dsh_demo_skills`)."""
        key = self._plugins("dsh_demo_skills")
        if self._skills is None or self._skills[0] != key:
            self._skills = (key, self._collect_skills())
        return list(self._skills[1])

    def _collect_skills(self) -> list[DemoSkill]:
        skills: list[DemoSkill] = []
        for contribution in self.hooks.each("dsh_demo_skills", {}):
            for skill in contribution.value or ():
                if isinstance(skill, DemoSkill):
                    skills.append(skill)
                else:
                    logger.error(
                        "plugin %s returned %r from dsh_demo_skills; expected a DemoSkill",
                        contribution.plugin,
                        skill,
                    )
        return skills

    def cli_commands(
        self, register_for: Callable[[str], RegisterCommand], on_error: ErrorHandler
    ) -> None:
        """Ask every plugin for its `dsh` subcommands (`dsh_cli_commands`).

        `register_for(plugin)` is the `register` callback that plugin gets (it
        stamps the name); `on_error(plugin, hook, error)` hears of a plugin
        whose hook raised.
        """
        self.hooks.each(
            "dsh_cli_commands",
            lambda plugin: {"register": register_for(plugin)},
            on_error=on_error,
        )


def _json(plugin: str, value: object) -> JsonValue:
    return to_json(value)


def _json_object(plugin: str, value: object) -> dict[str, JsonValue]:
    data = to_json(value)
    if not isinstance(data, dict):
        raise TypeError(f"expected a JSON object, got {type(value).__name__}")
    return data


def _alert(plugin: str, value: object) -> AlertContent:
    try:
        return AlertContent.model_validate(to_json(value))
    except ValidationError as error:
        raise TypeError(f"not an alert: {describe(error)}") from None


def _epoch_ms(plugin: str, value: object) -> int:
    if type(value) is not int:
        raise TypeError(f"expected epoch milliseconds (an int), got {value!r}")
    return value


def _health_keys(plugin: str, value: object) -> dict[str, JsonValue]:
    """A `dsh_health` answer as a dict of JSON values (TypeError names what is wrong)."""
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise TypeError(f"expected a mapping of str keys to JSON values, not {value!r}")
    return {key: to_json(item) for key, item in value.items()}
