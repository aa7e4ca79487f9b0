"""`dsh store migrate` and `dsh store copy` (DESIGN §4, §11).

    dsh store migrate [--data-dir DIR] [--store URL]
    dsh store copy SRC DST [--overlay PATH]

For the PostgreSQL store it applies every migration the database lacks,
under an advisory lock (safe while hosts start), and says from which
version to which; `dsh web` does the same at start. A store that needs no
migrations (JSONL, memory) says so. Exit 1 with one line naming the store
(without its password) when it cannot be reached.

`copy` copies everything one store holds into another — every Session, the
trash, the wake entries and the attention records — between `jsonl:DIR`
and `postgresql://…` in either direction, or JSONL to JSONL
(`dsh.cli.transfer.copy` says how, and why a second run changes nothing).
It refuses while a `dsh web` uses either store, naming it
(`dsh.cli.transfer.holders`), and when DST holds another log under an id
SRC has. Then the plugins of the overlay (`--overlay`, else the one SRC's
data dir remembers) copy the records they keep beside the Sessions
(`dsh_store_copy`, `dsh.cli.transfer.plugins`), one line each on stdout.
Progress goes to stderr (a bar on a terminal, plain lines
otherwise); the last line on stdout says what was copied and how fast.
Exit 0 when DST holds everything SRC does, 1 otherwise.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import anyio

from ..attention.backends import attention_backend_for
from ..persistence.backend import Backend
from ..persistence.backends import BackendChoice, choose_backend
from ..persistence.datadir import default_data_dir
from ..persistence.errors import BackendChoiceError, StorageError
from ..persistence.location import location_of
from ..plugins.commands import readable_backend
from ..plugins.errors import OverlayError, PluginError
from ..plugins.overlay import Overlay, load_overlay
from ..wake.backends import wake_backend_for
from ..wake.errors import WakeBackendError, WakeUnavailable
from ..web.running import remembered_overlay
from .app import (
    EXIT_OK,
    Command,
    Streams,
    add_data_dir_option,
    add_overlay_option,
    backend_choice,
    overlay_path,
)
from .errors import CommandError
from .transfer.copy import CopyReport, Side, copy_store
from .transfer.holders import StoreHeld, held_stores, postgres_holders
from .transfer.plugins import PluginRecordsError, copy_plugin_records
from .transfer.progress import LineProgress

__all__ = ["COMMAND"]


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", dest="action", metavar="ACTION", required=True)
    migrate = actions.add_parser(
        "migrate",
        help="create or upgrade the store's tables",
        description="Create or upgrade the store's tables (what dsh web also does at start).",
    )
    add_data_dir_option(migrate)  # and --store
    migrate.set_defaults(run=_migrate)
    copy = actions.add_parser(
        "copy",
        help="copy every Session, the trash, the wake entries and the alerts into another store",
        description="Copy everything SRC holds into DST (jsonl:DIR or postgresql://...): every "
        "Session, the trash, the wake entries and the attention records, each log read back "
        "and compared. Run it again to continue an interrupted copy; a finished one changes "
        "nothing. Refuses while a dsh web uses either store.",
    )
    copy.add_argument("source", metavar="SRC", help="the store to copy from (jsonl:DIR or a URL)")
    copy.add_argument("target", metavar="DST", help="the store to copy into (jsonl:DIR or a URL)")
    add_overlay_option(
        copy,
        help="the overlay dsh web runs with: its plugins copy their own records too "
        "(default: the one SRC's data dir remembers)",
    )
    copy.set_defaults(run=_copy)


def _migrate(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)
    try:
        done = choice.prepare()
    except (StorageError, OSError) as error:
        raise CommandError(str(error)) from error
    streams.line(done or f"the {choice.kind.name} store {choice.describe()} needs no migrations")
    return EXIT_OK


def _store(url: str) -> BackendChoice:
    if ":" not in url:
        raise CommandError(f"store {url!r} is not NAME:LOCATION; use jsonl:DIR or postgresql://…")
    try:
        choice = choose_backend(url, default_data_dir(), environ={})
    except BackendChoiceError as error:
        raise CommandError(str(error)) from error
    if choice.kind.name == "memory":
        raise CommandError(
            "memory: keeps nothing once its process ends; copy jsonl:DIR or PostgreSQL"
        )
    return choice


def _copy(args: argparse.Namespace, streams: Streams) -> int:
    source, target = _store(args.source), _store(args.target)
    if (source.kind.name, source.describe()) == (target.kind.name, target.describe()):
        raise CommandError(f"SRC and DST are the same store ({source.describe()})")
    overlay = _plugins_overlay(args, source)
    progress = LineProgress(streams.err)
    started = time.monotonic()
    try:
        readable_backend(source)
        with held_stores(source, target), streams.warnings():
            report, said = anyio.run(_copy_between, source, target, progress, overlay)
    except (StorageError, WakeBackendError, WakeUnavailable, OSError) as error:
        raise CommandError(str(error)) from error
    except (PluginRecordsError, PluginError) as error:
        raise CommandError(
            f"{error} (the host's records are copied; run the copy again)"
        ) from error
    for note in report.notes:
        streams.note(f"dsh: note: {note}")
    if overlay is None:
        streams.note(
            "dsh: note: no overlay was given and SRC remembers none, so records plugins keep "
            "beside the Sessions (dsh-notify's outbox and Web Push key) were not copied; "
            "pass --overlay PATH (the one dsh web runs with) to copy them"
        )
    streams.line(_said(report, source, target, time.monotonic() - started))
    for line in said:
        streams.line(line)
    return EXIT_OK


def _plugins_overlay(args: argparse.Namespace, source: BackendChoice) -> Overlay | None:
    """The overlay whose plugins copy their records: `--overlay`, else the one the source
    data dir remembers, else None."""
    path = overlay_path(args)
    if path is None and source.kind.name == "jsonl":
        path = remembered_overlay(Path(source.describe()))
    if path is None:
        return None
    try:
        return load_overlay(path)
    except OverlayError as error:
        raise CommandError(str(error)) from error


async def _copy_between(
    source: BackendChoice, target: BackendChoice, progress: LineProgress, overlay: Overlay | None
) -> tuple[CopyReport, list[str]]:
    opened: list[Backend] = []
    try:
        sides = []
        for choice in (source, target):
            backend = choice.open()
            opened.append(backend)
            await backend.prepare()
            await _refuse_holders(choice, backend)
            sides.append(
                Side(
                    choice.describe(),
                    backend,
                    wake_backend_for(choice, backend),
                    attention_backend_for(backend),
                )
            )
        report = await copy_store(sides[0], sides[1], progress, now_ms=int(time.time() * 1000))
        for choice, backend in zip((source, target), opened, strict=True):
            await _refuse_holders(choice, backend, during=True)
        said = []
        if overlay is not None:
            locations = [location_of(backend) for backend in opened]
            said = await copy_plugin_records(overlay, locations[0], locations[1])
        return report, said
    finally:
        with anyio.CancelScope(shield=True):
            for backend in opened:
                await backend.aclose()


async def _refuse_holders(choice: BackendChoice, backend: Backend, *, during: bool = False) -> None:
    holders = await postgres_holders(backend)
    if not holders:
        return
    if during:
        raise StoreHeld(
            f"a dsh web started on {choice.describe()} during the copy ({'; '.join(holders)}): "
            "stop it and run the copy again (it continues where it is)"
        )
    raise StoreHeld(
        f"{choice.describe()} is in use by {'; '.join(holders)}: stop every dsh web on it first"
    )


def _said(report: CopyReport, source: BackendChoice, target: BackendChoice, seconds: float) -> str:
    where = f"from {source.describe()} to {target.describe()}"
    if not report.changed:
        return (
            f"{target.describe()} already holds everything {source.describe()} does "
            f"({report.sessions} Sessions, {report.trashed} in the trash): nothing copied"
        )
    rate = max(seconds, 1e-3)
    return (
        f"copied {report.written} of {report.sessions + report.trashed} Sessions "
        f"({report.trashed} in the trash; {report.events:,} events), "
        f"{report.wake_entries} wake entries and {report.attention} attention records "
        f"{where} in {seconds:.1f} s ({report.sessions / rate:,.0f} Sessions/s, "
        f"{report.events / rate:,.0f} events/s)"
    )


COMMAND = Command(
    name="store", help="prepare the store (migrations), copy it into another", configure=_configure
)
