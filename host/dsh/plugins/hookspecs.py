"""The `dsh` hook specifications.

Plugins implement these with `@dsh.hookimpl`. The host always calls hooks with
keyword arguments, through its one hook caller (`dsh.hooks`), in pluggy's
order: `tryfirst` implementations first, `trylast` ones last, otherwise the
plugin loaded last first. A spec grows only by adding arguments; an
implementation may take a subset of them.

Every hook says whether one failing plugin can hide the others' results.
For the broadcast hooks it cannot: each implementation is called on its own,
and an exception (or a result of the wrong type) is logged, naming the
plugin and the hook, and skipped. Because of that, hook wrappers
(`wrapper=True` or `hookwrapper=True`) have nothing to wrap: a plugin that
implements a dsh hook as a wrapper is refused when it loads.

Hooks that read a Session's log receive a `dsh.SessionLog`: for a cold
Session it is backed by storage, so read it through `event()` and `scan()`
(a type-filtered scan keeps a fold cheap) and never assume the whole log is
in memory.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import pluggy
from pydantic import BaseModel, JsonValue

from ..base.jsontypes import JsonLike

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from ..agents.agent import Agent
    from ..models.demo import DemoSkill
    from ..models.registry import Build
    from ..persistence.location import StorageLocation
    from ..session.event import SessionEvent
    from ..session.log import SessionLog
    from .commands import CommandContext
    from .context import ClientModule

__all__ = ["PROJECT", "CommandRun", "RegisterCommand", "RegisterModel", "hookimpl", "hookspec"]

PROJECT = "dsh"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

CommandRun = Callable[[argparse.Namespace, "CommandContext"], "int | Awaitable[int | None] | None"]
"""A plugin command's body: `run(args, context)`, sync or async, returning the exit code."""


class RegisterCommand(Protocol):
    """The `register` callback `dsh_cli_commands` receives."""

    def __call__(
        self,
        name: str,
        run: CommandRun,
        *,
        help: str,
        configure: Callable[[argparse.ArgumentParser], Any] | None = None,
    ) -> None: ...


@hookspec
def dsh_agent_published(agent: Agent) -> None:
    """An agent has become live in this Host (new Session, resume, fork or child).

    Called once per agent, right after its Session is live and before it takes
    any input. A plugin sees only agents published after it loaded: this hook
    is never historic. Install per-agent work in a scope joined to
    `agent.scope` and the plugin's own scope (`context.install(agent)`).
    Whether the agent is a root is `agent.is_root`, which follows the
    Session's durable `delegationDepth`. The return value is ignored.

    Failures are contained per plugin: a plugin that raises is logged and the
    others still see the agent.
    """


@hookspec(firstresult=True)
def dsh_event_view(session: SessionLog, event: SessionEvent) -> Mapping[str, JsonLike] | None:
    """Return the presentation sidecar for a durable `event` of `session`, or None.

    Called for events that are known to be stored (after a flush acknowledged
    them, or when reading cold history), never on append. Stop at first non-None
    result: the first plugin that returns a view wins. Must be pure and fast:
    it may run for every event of a history page.

    `session` is a `dsh.SessionLog`. For a live Session it is the Session
    itself and the call runs on the event loop. For a cold one it is the
    stored log (`Catalogue.stored_log`) and the call runs in a worker thread, where
    every read may read storage: read only what the view needs through
    `session.event(seq)` and `session.scan(start, stop, types=…, reverse=…)`
    (filter by your own event types and stop early), never walk or copy the
    whole log, and do not touch the event loop or other Sessions.

    Failures are contained per plugin: a plugin that raises, or returns
    something that is not a JSON object, is logged and skipped, and the next
    plugin may still answer.
    """


@hookspec(firstresult=True)
def dsh_session_alert(session: SessionLog, event: SessionEvent) -> Mapping[str, JsonLike] | None:
    """Return what a durable `event` of `session` means to a person, or None.

    Answer `{"title": ..., "body": ..., "tag": ...}` for an event a person
    should hear of wherever they are (a delivered reminder): the Host keeps
    it as an unread alert of the Session and tells every page, whichever
    Session it shows (`WS /api/live`). `title` is one line (at most 200
    characters), `body` a sentence or two (at most 1000), `tag` names what
    the alert is about (at most 200; a notification with the same tag
    replaces an older one, so one per occurrence, not one per reminder).

    Called once per event, after a flush acknowledged it — never on append,
    so an alert never announces an event a failed write could take back —
    on the event loop, with the live Session (read it through `SessionLog`,
    up to `event`). The Host calls it only for events of plugins' own types.
    Must be pure and fast. Stop at first non-None result. Failures are
    contained per plugin: a plugin that raises, or returns something that
    is not such an object, is logged and skipped.
    """


@hookspec
def dsh_client_modules() -> list[ClientModule]:
    """Return the browser modules this plugin ships, as `dsh.ClientModule`s.

    Called once each time the set of loaded plugins changes (not per
    request); the host serves each module under `/plugins/<plugin>/<file>`
    and lists it in `/api/client-modules`. Each module is an ES module file
    that exports `register(registry)`. Return an empty list (or do not
    implement the hook) to ship none.

    Failures are contained per plugin: a plugin that raises ships no module,
    an item that is not a `ClientModule` is logged and skipped; the other
    plugins' modules are served.
    """
    return []  # a specification: never called; plugins provide the body


@hookspec
def dsh_web_routes() -> Sequence[BaseRoute]:
    """Return the HTTP routes this plugin serves (Starlette routes, e.g. `Route`).

    Called once each time the set of loaded plugins changes (not per
    request), by `dsh web` only. The host's own routes always win: a plugin
    route that matches a host path is never reached. A route under `/api/`
    is behind the access token like the host's own (and answered `no-store`);
    a route anywhere else needs no token — public code (a service worker) or
    a route that checks a credential of its own, which then must not be
    guessable. Every route is still behind the Host allowlist and carries the
    security headers. Validate what a route reads (pydantic), and answer
    errors as `{"error": {"code", "message"}}` like the host's own.

    Failures are contained per plugin: a plugin that raises serves no route,
    an item that is not a Starlette route is logged and skipped.
    """
    return []  # a specification: never called; plugins provide the body


@hookspec
def dsh_health() -> Mapping[str, JsonLike] | None:
    """Return what this plugin adds to `GET /api/health`: top-level keys and their JSON.

    Called on every health request, so answer from memory (never wait on
    storage or a network). A key the host answers itself (`ok`, `version`,
    `storage`, …) or one another plugin gave first is logged and left out.
    A plugin's health never changes the status code: `/api/health` is about
    whether the host keeps what it is given.

    Failures are contained per plugin: a plugin that raises, or returns
    something that is not a mapping of JSON values, adds nothing.
    """


@hookspec
def dsh_store_copy(
    source: StorageLocation, target: StorageLocation
) -> Awaitable[str | None] | None:
    """Copy this plugin's own records kept beside the Sessions from `source` to `target`.

    Called by `dsh store copy SRC DST` for each plugin of the overlay (its
    `--overlay`, else the one the source data dir remembers), after the
    host's own records (Sessions, trash, wake entries, alerts) are copied,
    while no `dsh web` holds either store. The plugin is loaded into a Host
    that runs nothing: read and write the two stores through the locations
    given (`dsh.StorageLocation`: a data dir, or a database URL and schema),
    never through `PluginContext.storage`. Return an awaitable (call an
    `async def`) resolving to one line for the person (`"notify: 3
    deliveries, the Web Push key, 2 subscriptions"`) or None when there was
    nothing to copy; return None from the hook for a plugin that keeps no
    records. Idempotent and resumable, like the host's copy: a record the
    target already holds is left as it is, so a second run changes nothing.

    Since a plugin's records must not silently stay behind, its failures are
    not contained: an exception stops the copy with exit 1, naming the plugin
    (what was copied stays; running it again continues).
    """


@hookspec
def dsh_session_wake_at(session: SessionLog) -> int | None:
    """Return when `session` next needs to be live (epoch milliseconds), or None.

    Called for a stored Session that is cold or about to become cold (the
    host's wake index), and by `Host.wake_at`. Must be pure: derived from the
    log alone (never from a clock or the plugin's live state), so that a
    rebuilt index agrees with the old one. A time in the past means "as soon
    as possible". The host takes the earliest time any plugin returned. For
    a cold Session `session` is its stored log and the call runs in a worker
    thread: read it as `dsh_event_view` says.

    Failures are contained per plugin: a plugin that raises, or returns
    something that is not an integer, is logged and counts as None; the
    other plugins' times still count.
    """


@hookspec
def dsh_session_check(session: SessionLog) -> str | None:
    """Return why this plugin could not use `session`'s log (one sentence), or None.

    Called for a whole log that is about to be added to a store from outside
    it (`dsh sessions import`), before anything is stored; never for a live
    Session. The host has already checked the header and that every event is
    valid and numbered in order: check what only the plugin knows about its
    own event types (the schedule plugin folds them and answers the fold's
    refusal). Must be pure: derived from the log alone. Runs in the command's
    thread; read the log as `dsh_event_view` says.

    Failures are contained per plugin: a plugin that raises, or returns
    something that is not a string, is reported as a check that failed (the
    log is refused, naming the plugin); the other plugins are still asked.
    """


@hookspec
def dsh_session_state(session: SessionLog) -> JsonLike:
    """Return this plugin's presentable state of `session` (JSON), or None for none.

    Called when a client reads a Session (`GET /api/sessions/{id}` lists it
    under `"plugins"`, keyed by plugin name) and after every flush that made
    more of a watched Session durable (a change is sent as a live
    `{"kind": "state"}` frame). `session` holds only durable events (for a
    live Session, the prefix its storage confirmed; for a cold one, what is
    stored), and reading it never starts an agent. Must be pure and cheap:
    derive the state from the log (the schedule plugin: its reminders). For
    a cold Session the call runs in a worker thread and every read may read
    storage: scan only your own event types (`scan(types=…)`), as
    `dsh_event_view` says.

    Failures are contained per plugin: a plugin that raises, or returns
    something that is not JSON, is logged and left out of `"plugins"`; the
    other plugins' states are still shown.
    """


@hookspec
def dsh_session_summary(session: SessionLog) -> JsonLike:
    """Return a compact summary of this plugin's state of `session` for the Session list, or None.

    Called for the live Sessions a summary is made of (each row of `GET
    /api/sessions`, and the `"session"` that creating, forking, resuming,
    renaming or messaging answers with), with the prefix of the Session its
    storage confirmed; the value is shown under the summary's `"plugins"`,
    keyed by plugin name. Keep it list-sized: a few counts and times (the
    schedule plugin's shape is meant to be `{"reminders": N, "next": "<ISO>"}`),
    never the whole state (`dsh_session_state` is for that).

    Must be pure: derived from the log alone. The host keeps the answer until
    more of the Session is durable (or a plugin loads or unloads), so return
    times, not countdowns, and let the reader compare them with its clock. It
    is not called for cold Sessions (that would read every listed log): their
    summaries carry `"plugins": null`.

    Failures are contained per plugin: a plugin that raises, or returns
    something that is not JSON, is logged and left out; the other plugins'
    summaries are still shown.
    """


class RegisterModel(Protocol):
    """The `register` callback `dsh_models` receives."""

    def __call__(
        self,
        name: str,
        build: Build,
        *,
        usage: str | None = None,
        settings: Callable[[], type[BaseModel]] | None = None,
    ) -> None: ...


@hookspec
def dsh_models(register: RegisterModel) -> None:
    """Register the model adapters this plugin offers: `register(name, build, usage=...,
    settings=...)`, one call per adapter.

    Called once when the Host starts, after every plugin loaded, when its
    model was given by name (`dsh web --model NAME`, or an overlay's `[host]
    model`) and no built-in adapter has that name. `build(argument, settings,
    context)` makes the adapter: `argument` is the text after `NAME:` (or
    None), `settings` the `[host.NAME]` table validated by the pydantic model
    `settings()` returns (None without one; it must forbid extra keys) and
    `context` a `dsh.ModelContext` (the Host's clock). `usage` is how the
    choice is written in error messages (default: the name). `register`
    stamps the plugin's name and raises `TypeError` for a wrong type or
    `ValueError` for a name that is not `[a-z][a-z0-9_-]*`, that a built-in
    adapter has, or that another plugin registered. The return value is ignored.

    Failures are contained per plugin: a plugin whose hook raises offers none
    of its adapters (it is logged); the others' adapters work.
    """


@hookspec
def dsh_demo_skills() -> Sequence[DemoSkill]:
    """Return what this plugin teaches the offline `demo` model, as `dsh.DemoSkill`s.

    Called each time the set of loaded plugins changes (not per request),
    when the Host's model is the demo. At every request the demo asks each
    skill, in call order, for its `answer` to the conversation; the first that
    answers wins, and when none does, each skill's `help` is part of the
    demo's help text. Skills must be pure functions of the request (the demo
    is deterministic). Return an empty sequence (or do not implement the
    hook) to teach nothing.

    Failures are contained per plugin: a plugin that raises teaches nothing,
    and an item that is not a `DemoSkill` is logged and skipped.
    """
    return []  # a specification: never called; plugins provide the body


@hookspec
def dsh_session_action(
    agent: Agent, name: str, args: dict[str, JsonValue]
) -> Awaitable[JsonLike] | None:
    """Start action `name` a person asked of this plugin on `agent`'s Session.

    Called only for the plugin the request names (`POST
    /api/sessions/{id}/actions` with `{"plugin", "action", "args"}`), never
    broadcast, with the Session's live agent (a cold Session is resumed
    first; `agent.is_root` tells a root from a delegated child). Return an
    awaitable (call an `async def`) that resolves to the JSON result once
    the change is durable, or None when this plugin has no action `name`
    (the host answers 404 `unknown_action`).

    Refuse with `dsh.ActionError` (or let a `dsh.ToolError` from tool code
    the action shares pass through): its `code` and `message` are the
    answer and its `status` the HTTP status (404 unknown, 422 bad
    arguments — `dsh.ActionArguments.parse(args)` raises that —, 409 a
    conflict). Since only one plugin is called, its failures are not
    contained: any other exception answers 500 `internal_error` and is
    logged.
    """


@hookspec
def dsh_cli_commands(register: RegisterCommand) -> None:
    """Register this plugin's `dsh` subcommands with `register(name, run, help=..., configure=...)`.

    Called once when `dsh` runs with an overlay (`dsh --overlay PATH
    COMMAND ...`, `$DSH_OVERLAY`, or the one the data dir remembers) that
    enables this plugin, before the arguments are parsed.
    `register` stamps the plugin's name on each command and raises
    `TypeError` (or `ValueError` for a name that is taken) on bad input.
    `configure(parser)` adds the command's arguments (`dsh.add_store_options`
    adds `--data-dir`, the store selection `dsh sessions` uses);
    `run(args, context)` does the work, sync or async, and returns the exit
    code (None is 0). A command never starts an agent: `context`
    (`dsh.CommandContext`) reads stored logs and writes output, and a change
    is asked of the running `dsh web` (`context.session_action`, which runs
    this plugin's `dsh_session_action` there). The return value is ignored.

    Failures are contained per plugin: a plugin whose hook raises registers
    none of its commands (`dsh` says so on stderr); the others' commands work.
    """
