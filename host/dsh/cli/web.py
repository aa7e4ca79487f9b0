"""`dsh web`: serve the browser client and the HTTP API (options in `dsh.web.cli`)."""

from __future__ import annotations

import argparse

from ..web.cli import add_web_arguments, run_from_args
from .app import Command, Streams

__all__ = ["COMMAND"]


def _run(args: argparse.Namespace, streams: Streams) -> int:
    return run_from_args(args, streams.out, streams.err)


def _configure(parser: argparse.ArgumentParser) -> None:
    add_web_arguments(parser)
    parser.set_defaults(run=_run)


COMMAND = Command(
    name="web", help="serve the browser client and the HTTP API", configure=_configure
)
