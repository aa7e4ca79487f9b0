"""`dsh web`: serve the browser client and the HTTP API (DESIGN §11).

    dsh web [--overlay PATH] [--data-dir DIR] [--store URL] [--host 127.0.0.1]
            [--port 8765] [--model demo|absent|openai|scripted:PATH]
            [--allow-host NAME[:PORT]]... [--trust-proxy ADDRESS]... [--access-log]
            [--log-format text|json]
            [--stop-grace SECONDS] [--new-token]

The overlay names the plugins to load and may set `[host] model`; `--model`
wins over it, and `demo` is the default. `--store` (else `$DSH_STORE`) picks
the store, `jsonl:<data dir>` by default. The access token is `$DSH_TOKEN`,
else the one kept in the data dir's `token` file (made on the first start;
`--new-token` replaces it; see `dsh.web.token_file`). Serving itself lives in
`dsh.web.launch`.
"""

from __future__ import annotations

import argparse
import os

from ..web.errors import LaunchError
from ..web.launch import CLOSE_RETRY_SECONDS, DEFAULT_MODEL, run_web
from ..web.logs import LOG_FORMATS, LogFormat
from ..web.settings import DEFAULT_HOST, DEFAULT_PORT
from ..web.token_file import token_path
from .app import (
    Command,
    Streams,
    add_data_dir_option,
    add_model_option,
    add_overlay_option,
    backend_choice,
    data_dir_of,
    model_of,
    overlay_of,
)
from .errors import CommandError

__all__ = ["COMMAND"]

LOG_FORMAT_VARIABLE = "DSH_LOG_FORMAT"


def _configure(parser: argparse.ArgumentParser) -> None:
    add_overlay_option(
        parser, help="an overlay file, or a directory holding overlay.toml (default: no plugins)"
    )
    add_data_dir_option(parser)  # and --store
    parser.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to bind (default: {DEFAULT_HOST})"
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"port to listen on; 0 picks a free one (default: {DEFAULT_PORT})",
    )
    add_model_option(parser)
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also answer to this Host header (e.g. behind a proxy); repeatable",
    )
    parser.add_argument(
        "--trust-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="believe X-Forwarded-Proto/-For from this reverse proxy (an IP address or "
        "network); repeatable; none by default",
    )
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="log one line per HTTP request (the access token is redacted from it)",
    )
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=None,
        help="text for people, or json: one object per line for a log collector "
        "(default: $DSH_LOG_FORMAT, else text)",
    )
    parser.add_argument(
        "--stop-grace",
        type=_seconds,
        default=CLOSE_RETRY_SECONDS,
        metavar="SECONDS",
        help="on stop, how long to keep retrying writes storage refused "
        f"(default: {CLOSE_RETRY_SECONDS:g})",
    )
    parser.add_argument(
        "--new-token",
        action="store_true",
        help="replace the access token kept in the data dir (open tabs must then be given "
        "the new address); without it the token is reused across restarts",
    )
    parser.set_defaults(run=_run)


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a port number; use 1-65535 (e.g. --port {DEFAULT_PORT}), "
            "or 0 for a free one"
        )
    return port


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {value!r}") from None
    if not 0 <= seconds <= 3600:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..3600 seconds")
    return seconds


def _log_format(given: LogFormat | None) -> LogFormat:
    """`--log-format`, else `$DSH_LOG_FORMAT`, else text; a bad variable is a usage error."""
    if given is not None:
        return given
    value = os.environ.get(LOG_FORMAT_VARIABLE, "").strip().lower() or "text"
    for known in LOG_FORMATS:
        if value == known:
            return known
    raise CommandError(f"${LOG_FORMAT_VARIABLE} is {value!r}; use one of: {', '.join(LOG_FORMATS)}")


def _run(args: argparse.Namespace, streams: Streams) -> int:
    overlay = overlay_of(args)
    choice = backend_choice(args)
    try:
        return run_web(
            overlay=overlay,
            choice=choice,
            model=model_of(args, overlay, default=DEFAULT_MODEL),
            host=args.host,
            port=args.port,
            allowed_hosts=args.allow_host,
            trusted_proxies=args.trust_proxy,
            access_log=args.access_log,
            log_format=_log_format(args.log_format),
            stdout=streams.out,
            stop_grace=args.stop_grace,
            token_path=token_path(choice, data_dir_of(args)),
            new_token=args.new_token,
        )
    except LaunchError as error:
        raise CommandError(str(error), problems=error.problems) from error


COMMAND = Command(
    name="web", help="serve the browser client and the HTTP API", configure=_configure
)
