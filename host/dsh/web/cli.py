"""`dsh web`: its arguments and how they become a running web host (DESIGN §11).

    dsh web [--overlay PATH] [--data-dir DIR] [--host 127.0.0.1] [--port 8765]
            [--model demo|absent|openai|scripted:PATH] [--allow-host NAME]...

The overlay (a file, or a directory holding `overlay.toml`) names the plugins
to load and may set `[host] model`; `--model` wins over it, and `demo` is the
default. Sessions live in `--data-dir` (default `$DSH_DATA_DIR`, else
`~/.local/share/dsh`). The access token is `$DSH_TOKEN`, or a fresh random
one; it is printed only inside the start-up URL.

The `dsh` command wires this in with `add_web_arguments(parser)` and
`run_from_args(args, stdout, stderr)` (this module does not import `dsh.cli`,
so neither package depends on the other's import order).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import anyio

from ..host import Host
from ..loader import PluginError
from ..models import resolve_model
from ..overlay import Overlay, OverlayError, load_overlay
from ..persistence import JsonlBackend
from ..persistence.backend import StorageError
from .server import WebStartupError, serve
from .settings import DEFAULT_HOST, DEFAULT_PORT, WebSettings, default_data_dir, resolve_token

__all__ = [
    "DEFAULT_MODEL",
    "add_web_arguments",
    "make_host_factory",
    "read_overlay",
    "run_from_args",
]

DEFAULT_MODEL = "demo"
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `dsh web` options to `parser`."""
    parser.add_argument(
        "--overlay",
        type=Path,
        metavar="PATH",
        help="an overlay file, or a directory holding overlay.toml (default: no plugins)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="where Sessions are stored (default: $DSH_DATA_DIR, else ~/.local/share/dsh)",
    )
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default: {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to listen on; 0 picks a free one (default: {DEFAULT_PORT})",
    )
    parser.add_argument(
        "--model",
        metavar="MODEL",
        help="demo | absent | openai | scripted:PATH (default: the overlay's, else demo)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also answer to this Host header (e.g. behind a proxy); repeatable",
    )


def read_overlay(path: Path | None) -> Overlay:
    """The overlay at `path`, or the default tree (no plugins) when there is none."""
    return Overlay.default() if path is None else load_overlay(path)


def make_host_factory(overlay: Overlay, data_dir: Path, model: str) -> Callable[[], Host]:
    """What the app's lifespan calls to build its Host (nothing runs until entered).

    The model spec is resolved now, so a bad `--model` fails before the server starts.
    """
    adapter = resolve_model(model, settings=overlay.host.model_settings)

    def make_host() -> Host:
        return Host(backend=JsonlBackend(data_dir), model=adapter, plugins=overlay.plugins)

    return make_host


def run_from_args(args: argparse.Namespace, stdout: TextIO, stderr: TextIO | None = None) -> int:
    """Run `dsh web` with parsed `args` until SIGINT/SIGTERM; returns the exit code."""
    err = stderr or sys.stderr
    try:
        overlay = read_overlay(args.overlay)
        model = args.model or overlay.host.model or DEFAULT_MODEL
        data_dir = args.data_dir.expanduser() if args.data_dir else default_data_dir()
        settings = WebSettings(
            token=resolve_token(),
            host=args.host,
            port=args.port,
            allowed_hosts=tuple(args.allow_host),
        )
        make_host = make_host_factory(overlay, data_dir, model)
    except (OverlayError, ValueError) as error:
        err.write(f"dsh web: error: {error}\n")
        return EXIT_USAGE
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        anyio.run(_serve, settings, make_host, stdout)
    except KeyboardInterrupt:
        err.write("dsh web: interrupted\n")
        return EXIT_INTERRUPTED
    except (WebStartupError, PluginError, StorageError, OSError) as error:
        err.write(f"dsh web: error: {error}\n")
        return EXIT_FAILURE
    return EXIT_OK


async def _serve(settings: WebSettings, make_host: Callable[[], Host], stdout: TextIO) -> None:
    await serve(settings, make_host, stdout=stdout)
