"""`dsh sessions list`, `show ID` and `restore ID`: stored Sessions from the command line.

All three use the same store `dsh web` does (`--store URL`, else
`$DSH_STORE`, else `jsonl:<data dir>`; the data dir is `--data-dir`, else
`$DSH_DATA_DIR`, else `~/.local/share/dsh`) and take no lock, so they work
while a `dsh web` runs. `list` and `show` only read: they create nothing, a
store with no `sessions/` folder simply holds no Sessions, and a Session that
is live in a running host shows its durable prefix. A file `list` skips (not
a readable log) is named on stderr as a warning. `restore` brings a Session
back from the trash (where deleting it put it).

`show` and `restore` exit 1 for an unknown id and 2 for a malformed one;
storage errors (such as a corrupt line) exit 1 with a message naming the file.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from ..persistence.backend import Backend, StorageError, StoredSession
from ..persistence.stores import StoreChoice
from ..session import InvalidSessionId, Lineage, SessionHeader, validate_session_id
from .app import (
    EXIT_OK,
    Command,
    CommandError,
    Streams,
    add_data_dir_option,
    store_of,
)
from .events import summarize, utc

__all__ = ["COMMAND"]

T = TypeVar("T")


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="list stored Sessions", description="List stored Sessions, by id."
    )
    add_data_dir_option(listing)  # and --store
    listing.set_defaults(run=_list)
    show = actions.add_parser(
        "show",
        help="print a stored Session's header and events",
        description="Print a stored Session's header and one line per event.",
    )
    show.add_argument("id", type=_session_id, metavar="ID", help="the Session id")
    add_data_dir_option(show)
    show.set_defaults(run=_show)
    restore = actions.add_parser(
        "restore",
        help="bring a deleted Session back from the trash",
        description="Bring a deleted Session back from the trash, unchanged.",
    )
    restore.add_argument("id", type=_session_id, metavar="ID", help="the Session id")
    add_data_dir_option(restore)
    restore.set_defaults(run=_restore)


COMMAND = Command(name="sessions", help="read (and restore) stored Sessions", configure=_configure)


def _session_id(value: str) -> str:
    try:
        return validate_session_id(value)
    except InvalidSessionId as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _use(store: StoreChoice, streams: Streams, operation: Callable[[Backend], Awaitable[T]]) -> T:
    backend = store.open()

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
    store = store_of(args)
    summaries = _use(store, streams, lambda backend: backend.list())
    if not summaries:
        streams.note(f"no sessions in {store.describe()}")
        return EXIT_OK
    streams.table(
        ["ID", "CREATED (UTC)", "EVENTS", "LINEAGE"],
        [
            [summary.id, utc(summary.created_at), str(summary.length), _lineage(summary.lineage)]
            for summary in summaries
        ],
    )
    return EXIT_OK


def _show(args: argparse.Namespace, streams: Streams) -> int:
    store = store_of(args)
    session_id: str = args.id
    stored = _use(store, streams, lambda backend: backend.inspect(session_id))
    if stored is None:
        raise CommandError(f"no session {session_id!r} in {store.describe()}")
    _write_header(streams, stored)
    _write_events(streams, stored)
    return EXIT_OK


def _restore(args: argparse.Namespace, streams: Streams) -> int:
    store = store_of(args)
    session_id: str = args.id
    _use(store, streams, lambda backend: backend.restore(session_id))
    streams.line(f"restored session {session_id}")
    return EXIT_OK


def _write_header(streams: Streams, stored: StoredSession) -> None:
    header: SessionHeader = stored.header
    fields = [
        ("session", header.id),
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
        streams.line(f"{name.ljust(width)}  {value}")


def _write_events(streams: Streams, stored: StoredSession) -> None:
    if not stored.events:
        return
    streams.line()
    seq_width = len(str(stored.events[-1].seq))
    type_width = max(len(event.type) for event in stored.events)
    for event in stored.events:
        streams.line(
            f"{str(event.seq).rjust(seq_width)}  {utc(event.time)}  "
            f"{event.type.ljust(type_width)}  {summarize(event)}"
        )


def _lineage(lineage: Lineage | None) -> str:
    if lineage is None:
        return "-"
    return f"fork of {lineage.parent_id} (first {lineage.forked_at} events)"
