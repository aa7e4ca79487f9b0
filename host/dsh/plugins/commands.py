"""What `dsh` commands share, built-in or contributed by plugins (`dsh_cli_commands`).

- `Streams`: where a command writes (`line`, `note`, `table`, and `exact` for
  machine output). What a person reads is shown as text: every control
  character a terminal would obey is escaped (`dsh.base.visible`), so a
  hostile title or prompt cannot rewrite the terminal; `exact` writes JSON
  byte for byte.
- `add_store_options(parser)` / `backend_choice(args)`: the store selection that
  `dsh web`, `dsh sessions` and plugin commands share: `--store URL`, else
  `$DSH_STORE`, else `jsonl:<data dir>`, where the data dir is `--data-dir
  DIR`, else `$DSH_DATA_DIR`, else `~/.local/share/dsh` (`data_dir_of`).
- The plugin-command contract: `register(name, run, *, help, configure=None)`
  (`CommandRegistry.register_for(plugin)` makes it) stamps the plugin's name
  on a `PluginCommand` and refuses bad input at once: `TypeError` for a
  wrong type, `ValueError` for a name that is not `[a-z][a-z0-9-]*` (at most
  32 characters), that a built-in command has, or that another plugin took.
  A plugin whose hook raised registers none of its commands.
- `CommandContext`: what a plugin command's `run(args, context)` gets: its
  output, read-only access to stored Sessions, and `session_action`, which
  asks the `dsh web` running on the data dir to run one of the plugin's
  actions (as `POST /api/sessions/{id}/actions` does). It never starts an
  agent.
- `readable_backend(store)`: what read-only commands check first, so that a
  mistyped `--data-dir` says it does not exist rather than "no sessions".

`dsh.cli.plugin_commands` loads the plugins and runs the chosen command.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic import JsonValue

from ..base.visible import VisibleFormatter, visible, visible_lines
from ..base.width import display_width, pad
from ..persistence.backend import Backend
from ..persistence.backends import STORE_ENV, BackendChoice, JsonlSettings, choose_backend
from ..persistence.datadir import DATA_DIR_ENV, default_data_dir
from ..persistence.errors import SessionNotFound, StorageError
from ..session.ids import validate_session_id
from ..session.log import Session, SessionLog
from .errors import HostNotRunning
from .hookspecs import CommandRun, RegisterCommand

__all__ = [
    "COMMAND_NAME",
    "ActionPoster",
    "CommandContext",
    "CommandRegistry",
    "PluginCommand",
    "Streams",
    "add_store_options",
    "backend_choice",
    "data_dir_of",
    "readable_backend",
    "run_command",
]

COMMAND_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
Configure = Callable[[argparse.ArgumentParser], Any]
ActionPoster = Callable[[Path, str, str, str, dict[str, JsonValue]], Awaitable[JsonValue]]
"""`post(data_dir, session_id, plugin, action, args)`: run a plugin's action on the `dsh web`
of `data_dir` and return its result; raises `ActionError` (its refusal) or `HostNotRunning`."""


@dataclass(frozen=True, slots=True)
class Streams:
    """Where a command writes: `out` for results, `err` for messages.

    `line`, `note`, `table` and the warnings are for a person: control
    characters in them are escaped (`dsh.visible`; a line feed in `line` or
    `note` still starts a new line, one in a table cell does not). `exact`
    is for machines.
    """

    out: TextIO
    err: TextIO

    def line(self, text: str = "") -> None:
        """Write one line of output, control characters escaped."""
        self.out.write(visible_lines(text) + "\n")

    def note(self, text: str) -> None:
        """Write one line to stderr, control characters escaped."""
        self.err.write(visible_lines(text) + "\n")

    def exact(self, text: str) -> None:
        """Write `text` and a line feed to stdout exactly as given: for machine output
        (`--json`), never for text a person reads."""
        self.out.write(text + "\n")

    @contextlib.contextmanager
    def warnings(self) -> Iterator[None]:
        """While inside, the host's warnings (a skipped file, …) are `dsh: warning: …` lines."""
        handler = logging.StreamHandler(self.err)
        handler.setLevel(logging.WARNING)
        handler.setFormatter(VisibleFormatter("dsh: warning: %(message)s"))
        logger = logging.getLogger("dsh")
        logger.addHandler(handler)
        try:
            yield
        finally:
            logger.removeHandler(handler)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """Write `rows` under `header` in aligned columns; nothing at all when there are no rows.

        Columns are as wide as their widest cell on a terminal (`dsh.base.width`:
        中 takes two columns), measured after escaping, so they line up with CJK text.
        """
        if not rows:
            return
        lines = [[visible(cell) for cell in line] for line in (header, *rows)]
        widths = [
            max(display_width(line[column]) for line in lines) for column in range(len(header))
        ]
        for line in lines:
            cells = [pad(cell, width) for cell, width in zip(line, widths, strict=True)]
            self.line("  ".join(cells).rstrip())


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """Add the store selection (`--data-dir DIR`, `--store URL`); read it back with
    `backend_choice(args)` (the data dir alone: `data_dir_of(args)`)."""
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help=f"the data directory (default: ${DATA_DIR_ENV}, else ~/.local/share/dsh)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="where Sessions are stored: jsonl:DIR or memory: "
        f"(default: ${STORE_ENV}, else jsonl:<data dir>)",
    )


def backend_choice(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> BackendChoice:
    """The store `args` select (see the module docstring).

    Raises `BackendChoiceError` naming what is wrong with the URL. A parser without
    the store options selects the default.
    """
    url: str | None = getattr(args, "store", None)
    return choose_backend(url, data_dir_of(args, environ), environ=environ)


def readable_backend(choice: BackendChoice) -> BackendChoice:
    """`store`, once it is known to be there to read; else `StorageError` naming the problem.

    A JSONL store's data dir must be an existing directory (reading never
    creates one; `dsh web` does, on its first start).
    """
    settings = choice.settings
    if isinstance(settings, JsonlSettings):
        directory = settings.directory
        if not directory.exists():
            raise StorageError(
                f"the data dir {directory} does not exist; pass the one dsh web uses with "
                f"--data-dir DIR (or set ${DATA_DIR_ENV})"
            )
        if not directory.is_dir():
            raise StorageError(
                f"the data dir {directory} is not a directory; pass a directory with --data-dir DIR"
            )
    return choice


def data_dir_of(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> Path:
    """The data directory `args` asks for: `--data-dir`, else `default_data_dir()`.

    A parser without the store options reads the default.
    """
    given: Path | None = getattr(args, "data_dir", None)
    return given.expanduser() if given is not None else default_data_dir(environ)


@dataclass(frozen=True, slots=True)
class PluginCommand:
    """A `dsh` subcommand a plugin registered; `plugin` is stamped by `register`."""

    plugin: str
    name: str
    help: str
    run: CommandRun
    configure: Configure | None = None


class CommandRegistry:
    """Collects plugin commands, one plugin at a time; a failed plugin contributes none."""

    def __init__(self, reserved: Collection[str]) -> None:
        self._reserved = frozenset(reserved)
        self._commands: dict[str, PluginCommand] = {}
        self._failed: set[str] = set()
        self.problems: list[str] = []

    def register_for(self, plugin: str) -> RegisterCommand:
        """The `register` callback for `plugin`."""

        def register(
            name: str,
            run: CommandRun,
            *,
            help: str,
            configure: Configure | None = None,
        ) -> None:
            self._add(PluginCommand(plugin, *_checked(plugin, name, run, help, configure)))

        return register

    def failed(self, plugin: str, hook: str, error: Exception) -> None:
        """`plugin`'s hook raised: forget what it registered, and say why."""
        self._failed.add(plugin)
        self.problems.append(
            f"plugin {plugin!r} offers no commands: {hook} failed: {type(error).__name__}: {error}"
        )

    def commands(self) -> list[PluginCommand]:
        """The registered commands of every plugin whose hook returned, by name."""
        return sorted(
            (command for command in self._commands.values() if command.plugin not in self._failed),
            key=lambda command: command.name,
        )

    def _add(self, command: PluginCommand) -> None:
        if command.name in self._reserved:
            raise ValueError(
                f"plugin {command.plugin!r} cannot register command {command.name!r}: "
                "a built-in dsh command has that name"
            )
        taken = self._commands.get(command.name)
        if taken is not None and taken.plugin not in self._failed:
            raise ValueError(
                f"plugin {command.plugin!r} cannot register command {command.name!r}: "
                f"plugin {taken.plugin!r} registered it first"
            )
        self._commands[command.name] = command


def _checked(
    plugin: str, name: object, run: object, help: object, configure: object
) -> tuple[str, str, CommandRun, Configure | None]:
    what = f"plugin {plugin!r}: register"
    if not isinstance(name, str):
        raise TypeError(f"{what}: the command name must be a str, not {type(name).__name__}")
    if COMMAND_NAME.fullmatch(name) is None:
        raise ValueError(
            f"{what}: {name!r} is not a command name (lowercase letters, digits and '-', "
            "starting with a letter, at most 32 characters)"
        )
    if not callable(run):
        raise TypeError(f"{what}({name!r}): run must be callable, not {type(run).__name__}")
    if not isinstance(help, str) or not help.strip():
        raise TypeError(f"{what}({name!r}): help must be a non-empty str, not {help!r}")
    if configure is not None and not callable(configure):
        raise TypeError(
            f"{what}({name!r}): configure must be callable or None, not {type(configure).__name__}"
        )
    return name, help.strip(), run, configure


@dataclass
class CommandContext:
    """What a plugin command's `run(args, context)` may use.

    It writes to the command's output (`line`, `note`, `table`; `exact` for
    machine output) and reads
    stored Sessions (`session_ids`, `stored_log`) from the store the command's
    arguments select (see `add_store_options`). It never starts an agent and
    never writes to storage.
    """

    plugin: str
    streams: Streams
    args: argparse.Namespace
    _backend: Backend | None = field(default=None, repr=False)
    post_action: ActionPoster | None = field(default=None, repr=False)

    @property
    def data_dir(self) -> Path:
        """The data directory the command reads."""
        return data_dir_of(self.args)

    @property
    def store_name(self) -> str:
        """The store the command reads, named for messages ("no reminders in …")."""
        return backend_choice(self.args).describe()

    def line(self, text: str = "") -> None:
        """Write one line of output; control characters a terminal would obey are shown
        escaped (`dsh.visible`), a line feed still starts a new line."""
        self.streams.line(text)

    def note(self, text: str) -> None:
        """Write one line to stderr (control characters escaped, as `line`)."""
        self.streams.note(text)

    def exact(self, text: str) -> None:
        """Write `text` and a line feed exactly as given: for machine output (`--json`)."""
        self.streams.exact(text)

    def table(self, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        """Write `rows` under `header` in aligned columns (nothing when there are no rows);
        each cell stays on its line, its control characters escaped."""
        self.streams.table(header, rows)

    async def session_ids(self) -> list[str]:
        """The ids of every stored Session, newest first."""
        summaries = await self._store().list()
        ordered = sorted(summaries, key=lambda item: (item.created_at, item.id), reverse=True)
        return [summary.id for summary in ordered]

    async def stored_log(self, session_id: str) -> SessionLog:
        """A stored Session's whole log, in memory, read-only; `SessionNotFound` for an
        unknown id, `InvalidSessionId` for one that could not be one."""
        stored = await self._store().inspect(validate_session_id(session_id))
        if stored is None:
            raise SessionNotFound(f"no session {session_id!r}")
        return Session(stored.header, stored.events)

    async def session_action(
        self, session_id: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        """Ask the `dsh web` running on the data dir to run this plugin's `action` on a
        Session, as `POST /api/sessions/{id}/actions`; its result once it is durable.

        Raises `ActionError` with the host's refusal (status, code and sentence),
        and `HostNotRunning` naming the data dir when no `dsh web` answers there.
        """
        directory = self.web_dir
        if self.post_action is None:
            raise HostNotRunning(
                f"no dsh web is running on {directory}: start it, e.g. ./scripts/run"
            )
        return await self.post_action(directory, session_id, self.plugin, action, args)

    @property
    def web_dir(self) -> Path:
        """Where a `dsh web` serving this command's store keeps `web.json`: the JSONL
        store's directory, else the data dir."""
        settings = backend_choice(self.args).settings
        return settings.directory if isinstance(settings, JsonlSettings) else self.data_dir

    def _store(self) -> Backend:
        if self._backend is None:
            self._backend = readable_backend(backend_choice(self.args)).open()
        return self._backend

    async def aclose(self) -> None:
        """Release the store (`run_command` calls this after the command)."""
        if self._backend is not None:
            backend, self._backend = self._backend, None
            await backend.aclose()


async def run_command(
    command: PluginCommand,
    args: argparse.Namespace,
    streams: Streams,
    *,
    post_action: ActionPoster | None = None,
) -> int:
    """Run `command` with its parsed `args`; returns the exit code (None counts as 0).

    `post_action` is how `CommandContext.session_action` reaches a running
    `dsh web` (none: it raises `HostNotRunning`). Raises `TypeError` naming
    the plugin for a result that is not an exit code.
    """
    context = CommandContext(command.plugin, streams, args, post_action=post_action)
    try:
        with streams.warnings():  # what storage skips (a hostile file) is said, as for sessions
            result: Any = command.run(args, context)
            if inspect.isawaitable(result):
                result = await _awaited(result)
    finally:
        await context.aclose()
    if result is None:
        return 0
    if type(result) is not int:
        raise TypeError(
            f"plugin {command.plugin!r}: command {command.name!r} returned {result!r}, "
            "not an exit code (an int or None)"
        )
    return result


async def _awaited(pending: Awaitable[Any]) -> Any:
    return await pending
