"""`dsh sessions list`, `show ID` and `restore ID`: stored Sessions from the command line
(`export ID` and `import FILE`: `dsh.cli.session_files`).

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

from ..base.visible import visible
from ..persistence.backend import Backend, StoredSession
from ..persistence.backends import JsonlSettings
from ..persistence.datadir import check_data_dir
from ..persistence.errors import SessionExists, SessionNotFound, StorageError
from ..session.facts import SummaryFacts
from ..session.header import Lineage, SessionHeader
from ..session.summary import SessionSummary
from .app import EXIT_OK, Command, Streams, add_data_dir_option, add_help_default, backend_choice
from .errors import CommandError
from .events import summarize, utc
from .session_files import add_actions
from .stored import resolve, row, session_id_argument, use

__all__ = ["COMMAND"]


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
        "id", type=session_id_argument, metavar="ID", help="the Session id, or a unique start of it"
    )
    add_data_dir_option(show)
    show.set_defaults(run=_show)
    restore = actions.add_parser(
        "restore",
        help="bring a deleted Session back from the trash",
        description="Bring a deleted Session back from the trash, unchanged.",
    )
    restore.add_argument(
        "id", type=session_id_argument, metavar="ID", help="the Session id, or a unique start of it"
    )
    add_data_dir_option(restore)
    restore.set_defaults(run=_restore)
    add_actions(actions)  # export, import


COMMAND = Command(
    name="sessions",
    help="read, restore, export and import stored Sessions",
    configure=_configure,
)


def _list(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)
    stored = use(choice, streams, lambda backend: backend.list())
    rows = sorted(
        (row(item) for item in stored), key=lambda row: (row.created_at, row.id), reverse=True
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


def _show(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)

    async def show(backend: Backend) -> StoredSession | None:
        session_id = await resolve(backend, args.id, choice, stored=True)
        return await backend.inspect(session_id)

    stored = use(choice, streams, show)
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
        session_id = await resolve(backend, args.id, choice, stored=False)
        try:
            await backend.restore(session_id)
        except SessionNotFound as error:
            raise CommandError(f"{error}; only a deleted Session can be restored") from error
        except SessionExists as error:
            raise CommandError(f"{error}; there is nothing to restore") from error
        return session_id

    session_id = use(choice, streams, restore)
    streams.line(f"restored session {session_id}")
    return EXIT_OK


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
