"""The `dsh` hook specifications.

Plugins implement these with `@dsh.hookimpl`. The host always calls hooks with
keyword arguments. A spec grows only by adding arguments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy
from pydantic import JsonValue

if TYPE_CHECKING:
    from .agent import Agent
    from .plugins import ClientModule
    from .session import SessionEvent, SessionLog

__all__ = ["PROJECT", "hookimpl", "hookspec"]

PROJECT = "dsh"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def dsh_agent_published(agent: Agent) -> None:
    """An agent has become live in this Host (new Session, resume, fork or child).

    Called once per agent, right after its Session is live and before it takes
    any input. A plugin sees only agents published after it loaded: this hook
    is never historic. Install per-agent work in a scope joined to
    `agent.scope` and the plugin's own scope. The return value is ignored.
    """


@hookspec(firstresult=True)
def dsh_event_view(session: SessionLog, event: SessionEvent) -> dict[str, JsonValue] | None:
    """Return the presentation sidecar for a durable `event` of `session`, or None.

    Called for events that are known to be stored (after a flush acknowledged
    them, or when reading cold history), never on append. Stop at first non-None
    result: the first plugin that returns a view wins. Must be pure and fast:
    it may run for every event of a history page.

    `session` is a `dsh.SessionLog`. For a live Session it is the Session
    itself and the call runs on the event loop. For a cold one it is the
    stored log (`Host.stored_log`) and the call runs in a worker thread, where
    every read may read storage: read only what the view needs through
    `session.event(seq)` and `session.scan(start, stop, types=…, reverse=…)`
    (filter by your own event types and stop early), never walk or copy the
    whole log, and do not touch the event loop or other Sessions.
    """


@hookspec
def dsh_client_modules() -> list[ClientModule]:
    """Return the browser modules this plugin ships, as `dsh.plugins.ClientModule`s.

    Called when the web host starts and when a client asks
    `/api/client-modules`. Each module is an ES module file that exports
    `register(registry)`; the host serves it under `/plugins/<plugin>/...`.
    Return an empty list (or do not implement the hook) to ship none.
    """
    return []  # a specification: never called; plugins provide the body
