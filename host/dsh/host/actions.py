"""`SessionActions`: a person's action on a Session, run by the plugin that offers it.

`run(session_id, plugin, action, args)` calls that plugin's
`dsh_session_action` on the Session's live agent and answers its JSON result
once the plugin's change is durable (the plugin awaits its own barriers):

1. a plugin that is not loaded, or offers no actions, is `ActionError` 404
   (`unknown_plugin` / `unknown_action`), before anything is made live;
2. a cold Session is resumed first; one live on another host of a shared
   store runs there (`dsh.relay.actions`), whose answer is this one. When
   its owner let it go meanwhile (`Unclaimed`), it is made live here and
   tried again — `ATTEMPTS` times in all;
3. the plugin's own refusal (`ActionError`, `ToolError`: a `CodedError`)
   is raised as it is; any other failure of the plugin is logged and raised
   as `ActionError` 500 `internal_error`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import pluggy
from pydantic import JsonValue

from ..agents.agent import Agent
from ..base.errors import CodedError
from ..base.jsontypes import to_json
from ..plugins.errors import ActionError, HookNotImplemented
from ..plugins.hooks import Hooks
from ..relay.errors import Unclaimed
from ..session.errors import SessionLiveElsewhere
from ..session.ids import validate_session_id
from .liveness import Liveness

if TYPE_CHECKING:
    from ..relay.actions import ActionRelay

__all__ = ["ATTEMPTS", "SessionActions"]

log = logging.getLogger(__name__)

#: An action on a Session live elsewhere: relayed, and when its owner let the
#: Session go meanwhile, tried here again — this many times in all.
ATTEMPTS = 3

Resume = Callable[[str], Awaitable[tuple[Agent, bool]]]


class SessionActions:
    """Runs persons' actions for one Host (see the module docstring).

    `relay` is set by the Host when its store is shared by several hosts.
    """

    def __init__(
        self, pm: pluggy.PluginManager, hooks: Hooks, resume: Resume, liveness: Liveness
    ) -> None:
        self._pm = pm
        self._hooks = hooks
        self._resume = resume
        self._liveness = liveness
        self.relay: ActionRelay | None = None

    async def run(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        """Run `plugin`'s action `action` on a Session; its JSON result (module docstring)."""
        self._liveness.require_running()
        validate_session_id(session_id)
        if plugin not in self._hooks.implementers("dsh_session_action"):
            known = self._pm.get_plugin(plugin) is not None
            raise ActionError.not_found(
                f"plugin {plugin!r} has no actions"
                if known
                else f"no plugin {plugin!r} is loaded in this host",
                code="unknown_action" if known else "unknown_plugin",
            )
        for attempt in range(ATTEMPTS):
            try:
                agent, _ = await self._resume(session_id)
                break
            except SessionLiveElsewhere:
                if self.relay is None or attempt == ATTEMPTS - 1:
                    raise
                try:
                    return await self.relay.ask(session_id, plugin, action, args)
                except Unclaimed:
                    continue  # its owner let it go: make it live here
        return await self._call(agent, plugin, action, args)

    async def _call(
        self, agent: Agent, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        what = f"action {action!r} of plugin {plugin!r} on session {agent.session.id}"
        try:
            pending = self._hooks.call(
                plugin, "dsh_session_action", {"agent": agent, "name": action, "args": args}
            )
            if pending is None:
                raise ActionError.not_found(f"plugin {plugin!r} has no action {action!r}")
            if not inspect.isawaitable(pending):
                raise TypeError(
                    f"dsh_session_action returned {type(pending).__name__}, not an awaitable"
                )
            return to_json(await pending, "result")
        except CodedError:
            raise
        except HookNotImplemented:  # unloaded while resuming
            raise ActionError.not_found(
                f"no plugin {plugin!r} is loaded in this host", code="unknown_plugin"
            ) from None
        except Exception as error:
            log.exception("%s failed", what)
            raise ActionError(
                "internal_error",
                f"{what} failed ({type(error).__name__}); see the server log",
                status=500,
            ) from error
