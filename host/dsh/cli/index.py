"""`dsh index rebuild`: rebuild the wake index (and the search index) from the stored logs.

    dsh index rebuild --overlay PATH [--data-dir DIR] [--store URL]

The overlay must be the one `dsh web` runs with and must turn on `[host]
wake_cold_sessions`: its plugins are the ones whose `dsh_session_wake_at`
the index holds (they are loaded into a Host that starts no agent). The
command refuses while a `dsh web` holds the data dir's lock (it names the
PID): a running host keeps the index itself, in memory and on disk, and
would overwrite a rebuild done under it. Stop it first, or just restart it
after deleting the index file: start-up rebuilds a missing index by itself.

The search index of a JSONL data dir (`search.sqlite`) is made again too;
it is a cache like the wake index, and a missing one is also made again at
start, in the background.

A log that cannot be read is named on stderr and kept as an entry to derive
again at the next start; the command still succeeds. Exit 1 when the
overlay, the store or the index file cannot be used.
"""

from __future__ import annotations

import argparse

import anyio

from ..host.errors import HostError
from ..host.host import Host
from ..models.absent import AbsentModel
from ..persistence.errors import StorageError
from ..plugins.errors import PluginError
from ..wake.backends import wake_backend_for
from ..wake.errors import WakeBackendError, WakeUnavailable
from ..wake.rebuild import RebuildReport, rebuild_index
from .app import (
    EXIT_OK,
    Command,
    Streams,
    add_data_dir_option,
    add_overlay_option,
    backend_choice,
    overlay_of,
    overlay_path,
)
from .errors import CommandError
from .events import utc

__all__ = ["COMMAND"]


def _configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(title="actions", dest="action", metavar="ACTION", required=True)
    rebuild = actions.add_parser(
        "rebuild",
        help="rebuild the wake index from every stored log",
        description="Rebuild the wake index from every stored log, with the overlay's plugins "
        "(no agent is started). Refuses while a dsh web uses the data dir.",
    )
    add_overlay_option(
        rebuild, help="the overlay dsh web runs with (it must set [host] wake_cold_sessions)"
    )
    add_data_dir_option(rebuild)  # and --store
    rebuild.set_defaults(run=_rebuild)


COMMAND = Command(name="index", help="maintain the wake index", configure=_configure)


def _rebuild(args: argparse.Namespace, streams: Streams) -> int:
    overlay = overlay_of(args)
    if not overlay.host.wake_cold_sessions:
        named = overlay_path(args)
        which = f"the overlay {named}" if named is not None else "no overlay (the default tree)"
        raise CommandError(
            f"{which} does not set [host] wake_cold_sessions = true, so dsh web keeps no wake "
            "index; name the overlay it runs with (for example overlays/web-schedule-wake)"
        )
    choice = backend_choice(args)
    try:
        wake_backend = wake_backend_for(choice)
    except WakeUnavailable as error:
        raise CommandError(str(error)) from error
    lock = choice.writer_lock()
    try:
        if lock is not None:
            lock.acquire()
    except StorageError as error:
        raise CommandError(
            f"{error}: stop it before rebuilding the wake index (a running dsh web keeps it "
            "itself; deleting the index file and restarting also rebuilds it)"
        ) from error

    searched: list[int] = []

    async def main() -> RebuildReport:
        host = Host(backend=choice.open(), model=AbsentModel(), plugins=overlay.plugins)
        async with host:
            report = await rebuild_index(host, wake_backend)
            if host.search.index.persistent:
                searched.append(await host.search.rebuild())
            return report

    try:
        with streams.warnings():
            report = anyio.run(main)
    except (PluginError, HostError, StorageError, WakeBackendError, OSError) as error:
        raise CommandError(str(error)) from error
    finally:
        if lock is not None:
            lock.release()
    for session_id, reason in sorted(report.unreadable.items()):
        streams.note(
            f"dsh: warning: session {session_id} cannot be read ({reason}); "
            "it is derived again at the next start"
        )
    next_wake = report.next_wake
    when = "" if next_wake is None else f", the next at {utc(next_wake)}"
    streams.line(
        f"rebuilt {wake_backend.description} from {report.sessions} stored Session"
        f"{'' if report.sessions == 1 else 's'}: {report.waking} with a wake time{when}"
        + (f", {len(report.unreadable)} unreadable" if report.unreadable else "")
    )
    for count in searched:
        plural = "" if count == 1 else "s"
        streams.line(f"rebuilt the search index from {count} stored Session{plural}")
    return EXIT_OK
