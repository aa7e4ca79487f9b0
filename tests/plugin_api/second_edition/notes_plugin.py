"""`notes` as it was written against dsh's second edition: kept unchanged, so it must still load.

A frozen copy (git 0c4daf9): `tests/plugin_api/test_notes_plugin.py` runs
every end-to-end test against it as well as against `../notes_plugin.py`, the
same plugin written against the current API. It uses names the third edition
renamed (`Agent.store`), which warn but keep working. Do not modernise it.

The plugin's own description follows.

`notes`: a small plugin that uses every hook, written as a plugin author would (only `dsh`).

Notes are durable `notes/change` events in the Session's own log:
`{"op": "add", "text", "due"?}` and `{"op": "clear"}`.

- `dsh_agent_published`: a root agent gets the `note_add` tool.
- `dsh_event_view`: an added note's receipt.
- `dsh_session_state`: `{"notes": [{"text", "due"?}, ...]}` (None before the first note).
- `dsh_session_summary`: `{"notes": N, "due"?: earliest}` for the Session list.
- `dsh_session_wake_at`: the earliest `due` of the current notes.
- `dsh_session_action`: `add {text, due?}` and `clear` (409 when there is nothing to
  clear), under one lock per agent, each answering after its change is durable.
- `dsh_cli_commands`: `dsh --overlay PATH notes [--session ID] [--data-dir DIR]`.
"""

from __future__ import annotations

import argparse
import weakref
from collections.abc import Awaitable, Mapping
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dsh import (
    ActionArguments,
    ActionError,
    Agent,
    CommandContext,
    JsonLike,
    PluginContext,
    RegisterCommand,
    SessionEvent,
    SessionLog,
    Tool,
    ToolArguments,
    ToolContext,
    ToolError,
    add_store_options,
    flush_barrier,
    hookimpl,
)

EVENT = "notes/change"


class NotesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_notes: int = Field(default=10, ge=1)


class AddArguments(ActionArguments):
    text: str = Field(min_length=1, max_length=200)
    due: int | None = Field(default=None, ge=0)


class ClearArguments(ActionArguments):
    pass


class NoteToolArguments(ToolArguments):
    text: str = Field(min_length=1)


def notes_of(log: SessionLog) -> list[dict[str, JsonValue]]:
    """The current notes of a log (from its fold start), oldest first."""
    notes: list[dict[str, JsonValue]] = []
    for event in log.scan(log.fold_start, types={EVENT}):
        data = event.data
        if isinstance(data, dict) and data.get("op") == "clear":
            notes.clear()
        elif isinstance(data, dict) and data.get("op") == "add":
            notes.append({key: value for key, value in data.items() if key != "op"})
    return notes


def _used(log: SessionLog) -> bool:
    return next(iter(log.scan(log.fold_start, types={EVENT})), None) is not None


class NotesPlugin:
    Config = NotesConfig

    def __init__(self, context: PluginContext[NotesConfig]) -> None:
        self.context = context
        self._locks: weakref.WeakKeyDictionary[Agent, anyio.Lock] = weakref.WeakKeyDictionary()

    # -- publication ---------------------------------------------------------

    @hookimpl
    def dsh_agent_published(self, agent: Agent) -> None:
        if agent.is_root:
            scope = self.context.install(agent)
            scope.add(agent.tools.register(NoteTool(self)))

    # -- reading ---------------------------------------------------------------

    @hookimpl
    def dsh_event_view(
        self, session: SessionLog, event: SessionEvent
    ) -> Mapping[str, JsonLike] | None:
        if event.type == EVENT and isinstance(event.data, dict) and event.data.get("op") == "add":
            return {"note": event.data.get("text")}
        return None

    @hookimpl
    def dsh_session_state(self, session: SessionLog) -> JsonLike:
        if not _used(session):
            return None
        return {"notes": notes_of(session)}

    @hookimpl
    def dsh_session_summary(self, session: SessionLog) -> JsonLike:
        notes = notes_of(session)
        if not notes:
            return None
        dues = [due for note in notes if isinstance(due := note.get("due"), int)]
        return {"notes": len(notes), **({"due": min(dues)} if dues else {})}

    @hookimpl
    def dsh_session_wake_at(self, session: SessionLog) -> int | None:
        dues = [due for note in notes_of(session) if isinstance(due := note.get("due"), int)]
        return min(dues, default=None)

    # -- actions ------------------------------------------------------------------

    @hookimpl
    def dsh_session_action(
        self, agent: Agent, name: str, args: dict[str, JsonValue]
    ) -> Awaitable[JsonLike] | None:
        if name == "add":
            return self.add(agent, AddArguments.parse(args))
        if name == "clear":
            ClearArguments.parse(args)
            return self.clear(agent)
        return None

    async def add(self, agent: Agent, args: AddArguments) -> JsonLike:
        async with self._lock(agent):
            await flush_barrier(agent.store, agent.session)
            notes = notes_of(agent.session)
            if len(notes) >= self.context.config.max_notes:
                raise ActionError.conflict(
                    f"this Session already has {len(notes)} notes", code="too_many_notes"
                )
            data: dict[str, JsonValue] = {"op": "add", "text": args.text}
            if args.due is not None:
                data["due"] = args.due
            agent.store.append(agent.session, EVENT, data)
            await flush_barrier(agent.store, agent.session)
            return {"notes": len(notes) + 1}

    async def clear(self, agent: Agent) -> JsonLike:
        async with self._lock(agent):
            await flush_barrier(agent.store, agent.session)
            notes = notes_of(agent.session)
            if not notes:
                raise ActionError.conflict("there are no notes to clear", code="no_notes")
            agent.store.append(agent.session, EVENT, {"op": "clear"})
            await flush_barrier(agent.store, agent.session)
            return {"cleared": len(notes)}

    def _lock(self, agent: Agent) -> anyio.Lock:
        return self._locks.setdefault(agent, anyio.Lock())

    # -- the command line ---------------------------------------------------------

    @hookimpl
    def dsh_cli_commands(self, register: RegisterCommand) -> None:
        register(
            "notes", self.list_notes, help="list the notes of stored Sessions", configure=_options
        )

    async def list_notes(self, args: argparse.Namespace, context: CommandContext) -> int:
        ids = [args.session] if args.session else await context.session_ids()
        rows = []
        for session_id in ids:
            log = await context.stored_log(session_id)
            rows += [
                [session_id, str(note["text"]), str(note.get("due", "-"))] for note in notes_of(log)
            ]
        if not rows:
            context.note(f"no notes in {context.data_dir}")
            return 0
        context.table(["SESSION", "NOTE", "DUE"], rows)
        return 0


def _options(parser: argparse.ArgumentParser) -> Any:
    parser.add_argument("--session", metavar="ID", help="only this Session")
    add_store_options(parser)


class NoteTool(Tool[NoteToolArguments]):
    name = "note_add"
    description = "Add a note to this Session."
    arguments = NoteToolArguments

    def __init__(self, plugin: NotesPlugin) -> None:
        self._plugin = plugin

    async def run(self, args: NoteToolArguments, ctx: ToolContext) -> dict[str, int]:
        try:
            result = await self._plugin.add(ctx.agent, AddArguments(text=args.text))
        except ActionError as error:
            raise ToolError(error.code, error.message) from None
        assert isinstance(result, dict)
        count = result["notes"]
        assert isinstance(count, int)
        return {"notes": count}
