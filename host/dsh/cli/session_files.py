"""`dsh sessions export ID [-o FILE]` and `dsh sessions import FILE [--new-id]` (DESIGN §11).

A Session's log travels as one file in the storage format
(`dsh.persistence.jsonl.exchange`): the bytes a JSONL store keeps, from any
store. `export` reads the stored log (a live Session's durable prefix; no
lock, it works while a `dsh web` runs) and writes it to FILE, else to
stdout.

`import` adds a file's Session to the store, after checking all of it
before anything is stored:

1. the header and every event are valid, numbered from 0 in order, and the
   file was not cut short (`parse_log`);
2. the plugins of the overlay (`--overlay`, else `dsh --overlay`, else
   `$DSH_OVERLAY`; none: the default tree) can use it: each answers
   `dsh_session_check` (the schedule plugin: its fold accepts the log) in a
   Host of their own on a memory store, which starts no agent;
3. the id is neither stored nor in the trash — unless `--new-id`, which
   imports it as a fork under a new id instead (`Session.fork`: the whole
   log as the seed, `lineage` naming the file's id), so a Session can be
   brought in beside the one it came from.

It then writes the log, reads it back and compares it event by event, and
marks the Session's wake entry dirty so that a host derives when it next
needs it (a JSONL store without a wake index builds one at its next start).
A JSONL store's data dir is locked meanwhile: importing refuses while a
`dsh web` uses it, naming the PID. Exit 1 naming the problem (the file and
line, the plugin, the id); 0 once the Session is stored.
"""

from __future__ import annotations

import argparse
import time
import uuid
from pathlib import Path

import anyio

from ..host.errors import HostError
from ..host.host import Host
from ..models.absent import AbsentModel
from ..persistence.backend import Backend, StoredSession
from ..persistence.backends import BackendChoice
from ..persistence.errors import StorageError
from ..persistence.jsonl.exchange import encode_log, parse_log
from ..persistence.memory import MemoryBackend
from ..plugins.errors import PluginError
from ..session.log import Session
from ..wake.backend import WakeEntry
from ..wake.backends import wake_backend_for
from ..wake.errors import WakeBackendError
from .app import (
    EXIT_OK,
    Streams,
    add_data_dir_option,
    add_overlay_option,
    backend_choice,
    overlay_of,
)
from .errors import CommandError
from .stored import resolve, session_id_argument, use
from .transfer.copy import BATCH
from .transfer.holders import held_stores

__all__ = ["add_actions"]


def add_actions(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `export` and `import` to `dsh sessions`."""
    export = actions.add_parser(
        "export",
        help="write a stored Session's log to a file, in the storage format",
        description="Write a stored Session's log (its header, then one event per line, as a "
        "JSONL store keeps it) to FILE, or to stdout.",
    )
    export.add_argument(
        "id", type=session_id_argument, metavar="ID", help="the Session id, or a unique start"
    )
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="the file to write")
    add_data_dir_option(export)
    export.set_defaults(run=_export)
    imported = actions.add_parser(
        "import",
        help="add a Session from a file dsh sessions export wrote",
        description="Check a Session's log file (header, every event, the overlay's plugins) "
        "and add it to the store. Refused if the id is taken, unless --new-id.",
    )
    imported.add_argument("file", type=Path, metavar="FILE", help="the log to import")
    imported.add_argument(
        "--new-id",
        action="store_true",
        help="import it as a fork under a new id (its lineage names the file's Session)",
    )
    add_overlay_option(
        imported, help="the overlay whose plugins check the log (the one dsh web runs with)"
    )
    add_data_dir_option(imported)
    imported.set_defaults(run=_import)


def _export(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)

    async def read(backend: Backend) -> StoredSession | None:
        return await backend.inspect(await resolve(backend, args.id, choice, stored=True))

    stored = use(choice, streams, read)
    if stored is None:  # removed between finding and reading it
        raise CommandError(f"no session {args.id!r} in {choice.describe()}")
    data = encode_log(stored.header, stored.events)
    if args.output is None:
        _write_out(streams, data)
        return EXIT_OK
    try:
        args.output.write_bytes(data)
    except OSError as error:
        raise CommandError(f"cannot write {args.output}: {error}") from error
    streams.note(
        f"exported session {stored.header.id} ({len(stored.events)} events) to {args.output}"
    )
    return EXIT_OK


def _write_out(streams: Streams, data: bytes) -> None:
    """The bytes exactly, on a real stdout; decoded (they are UTF-8) on a text-only one."""
    buffer = getattr(streams.out, "buffer", None)
    if buffer is None:
        streams.out.write(data.decode("utf-8"))
        return
    streams.out.flush()
    buffer.write(data)
    buffer.flush()


def _import(args: argparse.Namespace, streams: Streams) -> int:
    try:
        data = args.file.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {args.file}: {error}") from error
    try:
        parsed = parse_log(args.file, data)
    except StorageError as error:
        raise CommandError(f"{error}; nothing was imported") from error
    _check_with_plugins(args, streams, parsed)
    log = _forked(parsed) if args.new_id else parsed
    choice = backend_choice(args)
    try:
        with held_stores(choice):
            note = anyio.run(_store, choice, log)
    except (StorageError, WakeBackendError, OSError) as error:
        raise CommandError(str(error)) from error
    if note:
        streams.note(f"dsh: note: {note}")
    lineage = f" as a fork of {parsed.header.id}" if args.new_id else ""
    streams.line(
        f"imported session {log.header.id}{lineage} ({len(log.events)} events) "
        f"into {choice.describe()}"
    )
    return EXIT_OK


def _check_with_plugins(args: argparse.Namespace, streams: Streams, parsed: StoredSession) -> None:
    overlay = overlay_of(args)
    if not overlay.plugins:
        return

    async def check() -> dict[str, str]:
        host = Host(backend=MemoryBackend(), model=AbsentModel(), plugins=overlay.plugins)
        async with host:
            log = Session(parsed.header, list(parsed.events))
            return await anyio.to_thread.run_sync(host.contributions.problems, log)

    try:
        with streams.warnings():
            problems = anyio.run(check)
    except (PluginError, HostError) as error:
        raise CommandError(str(error)) from error
    if problems:
        raise CommandError(
            f"{args.file} was not imported",
            problems=[
                f"{args.file}: the plugin {plugin} refuses it: {problem}"
                for plugin, problem in problems.items()
            ],
        )


def _forked(parsed: StoredSession) -> StoredSession:
    child = Session.fork(
        parsed.header,
        parsed.events,
        uuid.uuid4().hex[:16],
        at=len(parsed.events),
        created_at=int(time.time() * 1000),
    )
    return StoredSession(child.header, tuple(child.events), False)


async def _store(choice: BackendChoice, log: StoredSession) -> str | None:
    """Write `log` as a new Session, read it back, mark its wake entry; a note, or None."""
    backend = choice.open()
    session_id = log.header.id
    try:
        if await backend.cursor(session_id) is not None:
            raise StorageError(
                f"session {session_id} already exists in {choice.describe()}; nothing was "
                "imported (--new-id imports it as a fork under a new id)"
            )
        if session_id in await backend.trashed():
            raise StorageError(
                f"the trash of {choice.describe()} holds a session {session_id}; nothing was "
                "imported (restore it, or import with --new-id)"
            )
        await backend.initialize(log.header, log.events[:BATCH])
        for offset in range(BATCH, len(log.events), BATCH):
            await backend.append(session_id, log.events[offset : offset + BATCH])
        back = await backend.inspect(session_id)
        if back is None or [event.to_bytes() for event in back.events] != [
            event.to_bytes() for event in log.events
        ]:
            raise StorageError(
                f"session {session_id} reads back from {choice.describe()} different from "
                "the file; it is stored as read back, check it with dsh sessions show"
            )
        return await _mark_for_waking(choice, backend, session_id)
    finally:
        with anyio.CancelScope(shield=True):
            await backend.aclose()


async def _mark_for_waking(choice: BackendChoice, backend: Backend, session_id: str) -> str | None:
    wake = wake_backend_for(choice, backend)
    try:
        loaded = await wake.load()
        if loaded.problem is not None and not wake.shared:
            return (
                f"{wake.description} is not there yet ({loaded.problem}): the next dsh web "
                "builds it from every log, this one included"
            )
        await wake.write([(session_id, WakeEntry(dirty=True))])
        return None
    finally:
        await wake.aclose()
