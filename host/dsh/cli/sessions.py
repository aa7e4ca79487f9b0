"""`dsh sessions list`, `show ID` and `restore ID`: stored Sessions from the command line.

All three use the same store `dsh web` does (`--store URL`, else
`$DSH_STORE`, else `jsonl:<data dir>`; the data dir is `--data-dir`, else
`$DSH_DATA_DIR`, else `~/.local/share/dsh`) and take no lock, so they work
while a `dsh web` runs. `list` and `show` only read: they create nothing, a
data dir that does not exist is an error saying so (not "no sessions"), a
data dir with no `sessions/` folder simply holds no Sessions, and a Session
that is live in a running host shows its durable prefix. A file `list` skips
(not a readable log) is named on stderr as a warning. `restore` brings a
Session back from the trash (where deleting it put it); it moves files, so it
first checks that the data dir is ours (`dsh.persistence.datadir.check_data_dir`).

`list` shows each Session's title (the one set, else the first line of its
first message, as the page shows it), newest first; `--json` prints the same
as `{"sessions": [{"id", "createdAt", "length", "lineage", "title", "updatedAt"}]}`.
`show` and `restore` take an id or a unique start of one (the short id the
page shows): a start that fits several Sessions is an error listing them.

What a Session holds is shown as text: a control character in a title, a
message or a tool's result (an escape sequence that would retitle the
terminal or write its clipboard, a bidi control) is printed as an escape
such as `\u001b` (`dsh.visible`); `--json` prints every value exactly.

`show` and `restore` exit 1 for an unknown id and 2 for a malformed one;
storage errors (such as a corrupt line) exit 1 with a message naming the file.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import anyio

from ..base.visible import visible
from ..persistence.backend import Backend, StoredSession, StoredSummary
from ..persistence.backends import BackendChoice, JsonlSettings
from ..persistence.datadir import check_data_dir
from ..persistence.errors import SessionExists, SessionNotFound, StorageError
from ..persistence.jsonl import JsonlBackend
from ..plugins.commands import readable_backend
from ..session.errors import InvalidSessionId
from ..session.facts import SummaryFacts
from ..session.header import Lineage, SessionHeader
from ..session.ids import validate_session_id
from ..session.summary import SessionSummary
from .app import EXIT_OK, Command, Streams, add_data_dir_option, add_help_default, backend_choice
from .errors import CommandError
from .events import summarize, utc

__all__ = ["COMMAND"]

T = TypeVar("T")


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", dest="action", metavar="ACTION")
    add_help_default(parser)
    listing = actions.add_parser(
        "list",
        help="list stored Sessions",
        description="List stored Sessions with their titles, newest first.",
    )
    listing.add_argument(
        "--json", action="store_true", help='print {"sessions": [...]} as JSON instead'
    )
    add_data_dir_option(listing)  # and --store
    listing.set_defaults(run=_list)
    show = actions.add_parser(
        "show",
        help="print a stored Session's header and events",
        description="Print a stored Session's header and one line per event.",
    )
    show.add_argument(
        "id", type=_session_id, metavar="ID", help="the Session id, or a unique start of it"
    )
    add_data_dir_option(show)
    show.set_defaults(run=_show)
    restore = actions.add_parser(
        "restore",
        help="bring a deleted Session back from the trash",
        description="Bring a deleted Session back from the trash, unchanged.",
    )
    restore.add_argument(
        "id", type=_session_id, metavar="ID", help="the Session id, or a unique start of it"
    )
    add_data_dir_option(restore)
    restore.set_defaults(run=_restore)


COMMAND = Command(name="sessions", help="read (and restore) stored Sessions", configure=_configure)


def _session_id(value: str) -> str:
    try:
        return validate_session_id(value)
    except InvalidSessionId as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _use(
    choice: BackendChoice, streams: Streams, operation: Callable[[Backend], Awaitable[T]]
) -> T:
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


def _list(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)
    stored = _use(choice, streams, lambda backend: backend.list())
    rows = sorted(
        (_row(item) for item in stored), key=lambda row: (row.created_at, row.id), reverse=True
    )
    if args.json:
        listed = [
            {key: value for key, value in row.to_dict().items() if key not in ("live", "plugins")}
            for row in rows
        ]
        streams.exact(json.dumps({"sessions": listed}, ensure_ascii=False))
        return EXIT_OK
    if not rows:
        streams.note(f"no sessions in {choice.describe()}")
        return EXIT_OK
    streams.table(
        ["ID", "CREATED (UTC)", "EVENTS", "TITLE", "LINEAGE"],
        [
            [
                row.id,
                utc(row.created_at),
                str(row.length),
                row.shown_title or "-",
                _lineage(row.lineage),
            ]
            for row in rows
        ],
    )
    return EXIT_OK


def _row(item: StoredSummary) -> SessionSummary:
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


def _show(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)

    async def show(backend: Backend) -> StoredSession | None:
        session_id = await _resolve(backend, args.id, choice, stored=True)
        return await backend.inspect(session_id)

    stored = _use(choice, streams, show)
    if stored is None:  # removed between finding and reading it
        raise CommandError(f"no session {args.id!r} in {choice.describe()}")
    _write_header(streams, stored)
    _write_events(streams, stored)
    return EXIT_OK


def _restore(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)
    settings = choice.settings
    if isinstance(settings, JsonlSettings):  # it moves files: only in a data dir of ours
        try:
            check_data_dir(settings.directory)
        except StorageError as error:
            raise CommandError(str(error)) from error

    async def restore(backend: Backend) -> str:
        session_id = await _resolve(backend, args.id, choice, stored=False)
        try:
            await backend.restore(session_id)
        except SessionNotFound as error:
            raise CommandError(f"{error}; only a deleted Session can be restored") from error
        except SessionExists as error:
            raise CommandError(f"{error}; there is nothing to restore") from error
        return session_id

    session_id = _use(choice, streams, restore)
    streams.line(f"restored session {session_id}")
    return EXIT_OK


async def _resolve(backend: Backend, given: str, choice: BackendChoice, *, stored: bool) -> str:
    """The id `given` names: itself when it is a whole id, else the one id it starts.

    `stored` looks among stored Sessions (`show`), else in the trash
    (`restore`; only a store whose trash can be listed matches a start there).
    Raises `CommandError` for no match or several.
    """
    if stored:
        if await backend.cursor(given) is not None:
            return given
        rows = [_row(item) for item in await backend.list()]
        candidates = {row.id: row.shown_title for row in rows if row.id.startswith(given)}
        where, hint = choice.describe(), "dsh sessions list shows the stored ones"
    else:
        trashed = _trashed(backend)
        if trashed is None or given in trashed:
            return given  # the backend says whether it holds it
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


def _trashed(backend: Backend) -> list[str] | None:
    """The ids in a JSONL store's trash; None for a store whose trash cannot be listed."""
    if not isinstance(backend, JsonlBackend):
        return None
    folder = backend.trash_directory
    return sorted(path.stem for path in folder.glob("*.jsonl")) if folder.is_dir() else []


def _names(candidates: Iterable[tuple[str, str | None]]) -> str:
    return ", ".join(
        session_id if title is None else f"{session_id} ({visible(title)})"
        for session_id, title in sorted(candidates)
    )


def _write_header(streams: Streams, stored: StoredSession) -> None:
    header: SessionHeader = stored.header
    facts = SummaryFacts().add_all(stored.events)
    title = SessionSummary(header.id, 0, False, 0, None, facts.title, facts.preview).shown_title
    fields = [
        ("session", header.id),
        ("title", title or "-"),
        ("created", utc(header.created_at)),
        ("origin", header.origin.kind),
        ("cwd", header.cwd),
        ("lineage", _lineage(header.lineage)),
        ("depth", str(header.depth)),
    ]
    if header.seed_length is not None:
        fields.append(("seed", f"events 0-{header.seed_length - 1} were inherited"))
    fields.append(("events", str(len(stored.events))))
    if stored.torn_tail:
        fields.append(("torn tail", "ignored (an incomplete last line, left by a crash)"))
    width = max(len(name) for name, _ in fields)
    for name, value in fields:
        streams.line(f"{name.ljust(width)}  {visible(value)}")


def _write_events(streams: Streams, stored: StoredSession) -> None:
    if not stored.events:
        return
    streams.line()
    seq_width = len(str(stored.events[-1].seq))
    type_width = max(len(event.type) for event in stored.events)
    for event in stored.events:
        streams.line(
            f"{str(event.seq).rjust(seq_width)}  {utc(event.time)}  "
            f"{visible(event.type).ljust(type_width)}  {visible(summarize(event))}"
        )


def _lineage(lineage: Lineage | None) -> str:
    if lineage is None:
        return "-"
    return f"fork of {lineage.parent_id} (first {lineage.forked_at} events)"
