"""`dsh store migrate`: create or upgrade the store's tables (DESIGN §11).

    dsh store migrate [--data-dir DIR] [--store URL]

For the PostgreSQL store it applies every migration the database lacks,
under an advisory lock (safe while hosts start), and says from which
version to which; `dsh web` does the same at start. A store that needs no
migrations (JSONL, memory) says so. Exit 1 with one line naming the store
(without its password) when it cannot be reached.
"""

from __future__ import annotations

import argparse

from ..persistence.errors import StorageError
from .app import EXIT_OK, Command, Streams, add_data_dir_option, backend_choice
from .errors import CommandError

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


def _migrate(args: argparse.Namespace, streams: Streams) -> int:
    choice = backend_choice(args)
    try:
        done = choice.prepare()
    except (StorageError, OSError) as error:
        raise CommandError(str(error)) from error
    streams.line(done or f"the {choice.kind.name} store {choice.describe()} needs no migrations")
    return EXIT_OK


COMMAND = Command(name="store", help="prepare the store (migrations)", configure=_configure)
