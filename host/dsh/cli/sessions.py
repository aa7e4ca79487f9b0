"""`dsh sessions list` and `dsh sessions show ID`: read stored Sessions.

Both only read the data directory (`--data-dir`, else `$DSH_DATA_DIR`, else
`~/.local/share/dsh`) through the JSONL backend; they create nothing, and a
directory with no `sessions/` folder simply holds no Sessions. They read what
is stored, so a Session that is live in a running host shows its durable
prefix. `show` exits 1 for an unknown id and 2 for a malformed one; storage
errors (such as a corrupt line) exit 1 with a message naming the file.
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio

from ..persistence.backend import StorageError, StoredSession
from ..persistence.jsonl import JsonlBackend
from ..session import InvalidSessionId, Lineage, SessionHeader, validate_session_id
from .app import EXIT_OK, Command, CommandError, Streams, add_data_dir_option, data_dir_of
from .events import summarize, utc

__all__ = ["COMMAND"]

T = TypeVar("T")


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="list stored Sessions", description="List stored Sessions, by id."
    )
    add_data_dir_option(listing)
    listing.set_defaults(run=_list)
    show = actions.add_parser(
        "show",
        help="print a stored Session's header and events",
        description="Print a stored Session's header and one line per event.",
    )
    show.add_argument("id", type=_session_id, metavar="ID", help="the Session id")
    add_data_dir_option(show)
    show.set_defaults(run=_show)


COMMAND = Command(name="sessions", help="read stored Sessions", configure=_configure)


def _session_id(value: str) -> str:
    try:
        return validate_session_id(value)
    except InvalidSessionId as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def _read(data_dir: Path, operation: Callable[[JsonlBackend], Awaitable[T]]) -> T:
    backend = JsonlBackend(data_dir)

    async def read() -> T:
        try:
            return await operation(backend)
        finally:
            await backend.aclose()

    try:
        return anyio.run(read)
    except (StorageError, OSError) as error:
        raise CommandError(str(error)) from error


def _list(args: argparse.Namespace, streams: Streams) -> int:
    data_dir = data_dir_of(args)
    summaries = _read(data_dir, lambda backend: backend.list())
    if not summaries:
        streams.note(f"no sessions in {data_dir}")
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
    data_dir = data_dir_of(args)
    session_id: str = args.id
    stored = _read(data_dir, lambda backend: backend.inspect(session_id))
    if stored is None:
        raise CommandError(f"no session {session_id!r} in {data_dir}")
    _write_header(streams, stored)
    _write_events(streams, stored)
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
