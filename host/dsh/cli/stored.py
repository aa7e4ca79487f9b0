"""What the `dsh sessions` actions share: opening the store to read, naming a Session.

- `session_id_argument(value)`: an argparse type for an id (exit 2 for a malformed one);
- `use(choice, streams, operation)`: run `operation(backend)` on a store known
  to be there, on an event loop of its own; storage errors become `CommandError`;
- `resolve(backend, given, choice, stored=...)`: the id a whole id or a unique
  start of one names, among stored Sessions or in the trash;
- `row(summary)`: a stored summary as the list shows it.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio

from ..base.visible import visible
from ..persistence.backend import Backend, StoredSummary
from ..persistence.backends import BackendChoice
from ..persistence.errors import StorageError
from ..plugins.commands import readable_backend
from ..session.errors import InvalidSessionId
from ..session.ids import validate_session_id
from ..session.summary import SessionSummary
from .app import Streams
from .errors import CommandError

__all__ = ["resolve", "row", "session_id_argument", "use"]

T = TypeVar("T")


def session_id_argument(value: str) -> str:
    try:
        return validate_session_id(value)
    except InvalidSessionId as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def use(choice: BackendChoice, streams: Streams, operation: Callable[[Backend], Awaitable[T]]) -> T:
    try:
        backend = readable_backend(choice).open()
    except StorageError as error:
        raise CommandError(str(error)) from error

    async def run() -> T:
        try:
            return await operation(backend)
        finally:
            await backend.aclose()

    try:
        with streams.warnings():
            return anyio.run(run)
    except (StorageError, OSError) as error:  # SessionNotFound, SessionExists, CorruptLog, …
        raise CommandError(str(error)) from error


def row(item: StoredSummary) -> SessionSummary:
    return SessionSummary(
        item.id,
        item.created_at,
        False,
        item.length,
        item.lineage,
        item.title,
        item.preview,
        updated_at=item.updated_at,
    )


async def resolve(backend: Backend, given: str, choice: BackendChoice, *, stored: bool) -> str:
    """The id `given` names: itself when it is a whole id, else the one id it starts.

    `stored` looks among stored Sessions (`show`), else in the trash
    (`restore`; only a store whose trash can be listed matches a start there).
    Raises `CommandError` for no match or several.
    """
    if stored:
        if await backend.cursor(given) is not None:
            return given
        rows = [row(item) for item in await backend.list()]
        candidates = {row.id: row.shown_title for row in rows if row.id.startswith(given)}
        where, hint = choice.describe(), "dsh sessions list shows the stored ones"
    else:
        trashed = await backend.trashed()
        if given in trashed:
            return given
        candidates = {session_id: None for session_id in trashed if session_id.startswith(given)}
        where, hint = f"the trash of {choice.describe()}", "only a deleted Session can be restored"
    if not candidates:
        raise CommandError(f"no session {given!r} in {where}; {hint}")
    if len(candidates) > 1:
        raise CommandError(
            f"{given!r} starts {len(candidates)} sessions in {where}: "
            f"{_names(candidates.items())}; give more of the id"
        )
    (only,) = candidates
    return only


def _names(candidates: Iterable[tuple[str, str | None]]) -> str:
    return ", ".join(
        session_id if title is None else f"{session_id} ({visible(title)})"
        for session_id, title in sorted(candidates)
    )
