"""Launching the web host: from a parsed overlay, store and model to a running server.

`run_web()` is what `dsh web` (see `dsh.cli.web` for its options) calls. It
checks everything it can *before* the server starts — the overlay's plugins
are installed, the model spec builds, no other `dsh web` writes to the same
store (the store's `DataDirLock`, held until the process ends), the store
is reachable and its tables are up to date (`BackendChoice.prepare`: the
PostgreSQL migrations) — so a mistake
is one clear line, not a server start-up traceback. The access token is
`$DSH_TOKEN`, or a fresh random one; it is printed only inside the start-up
URL.

On SIGINT/SIGTERM every live Session is closed, each retrying its last writes
for at most `stop_grace` seconds (`--stop-grace`, default
`CLOSE_RETRY_SECONDS`); if some could never be stored the command fails
(exit 1) naming them. A Session that goes cold never used ("New session"
and no message) is moved to the trash (`Host(clean_empty_sessions=True)`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

import anyio

from ..host.heap import HeapPolicy
from ..host.host import Host
from ..host.leases import LeaseSettings
from ..host.plugin_check import check_plugins as host_checks
from ..models.base import ModelAdapter
from ..models.registry import MODEL_CHOICES, ModelSpec, check_model, resolve_model
from ..persistence.backends import BackendChoice, JsonlSettings
from ..persistence.errors import StorageError
from ..plugins.errors import PluginError, PluginProblems
from ..plugins.overlay import Overlay
from ..wake.backends import wake_backend_for
from .errors import LaunchError, TokenError, WebStartupError
from .logs import LogFormat, log_formatter
from .running import WEB_FILE, forget_run, remember_run
from .server import serve
from .settings import WebSettings
from .token_file import choose_token

__all__ = [
    "CLOSE_RETRY_SECONDS",
    "DEFAULT_MODEL",
    "check_plugins",
    "make_host_factory",
    "run_web",
]

DEFAULT_MODEL = "demo"
CLOSE_RETRY_SECONDS = 10.0
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130


def check_plugins(overlay: Overlay) -> tuple[str, ...]:
    """Raise what loading the overlay's plugins would, before anything starts.

    The one check `dsh plugins --overlay` runs too (`dsh.host.plugin_check`:
    installed, importable, hooks and config valid, a trial load), so the two
    commands agree; several problems make one `PluginProblems` listing each.
    Returns the warnings (a plugin that implements no hook), for the log.
    """
    checks = host_checks(overlay.plugins)
    problems = [check.problem for check in checks if check.problem]
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise PluginProblems(problems)
    return tuple(warning for check in checks for warning in check.warnings)


def make_host_factory(
    overlay: Overlay,
    choice: BackendChoice,
    model: str,
    *,
    close_retry_seconds: float = CLOSE_RETRY_SECONDS,
) -> Callable[[], Host]:
    """What the app's lifespan calls to build its Host (nothing runs until entered).

    A built-in model spec is resolved now, so a bad `--model` or `[host.openai]`
    fails before the server starts (raises `ValueError` with the adapter's
    message); one a plugin of the overlay may offer is resolved when the Host
    starts (an unknown one fails the start, `ModelSettingsError`),
    and so is the wake store when the overlay wakes cold Sessions
    (`WakeUnavailable`, a `ValueError`, for a store that has none). The
    overlay's `idle_seconds` turns hibernation on (0: off).
    """
    plugins = bool(overlay.plugins)
    settings, source = overlay.host.model_settings, overlay.path
    adapter: ModelAdapter | ModelSpec
    if ModelSpec(model).name in MODEL_CHOICES:
        adapter = resolve_model(model, settings=settings, source=source, plugins=plugins)
    else:  # a plugin's, perhaps: resolved once the Host has loaded its plugins
        check_model(model, plugins=plugins)
        adapter = ModelSpec(model, settings, source)

    leases = LeaseSettings(
        ttl_seconds=overlay.store.lease_ttl_seconds,
        renew_seconds=overlay.store.lease_renew_seconds,
    )
    if overlay.host.wake_cold_sessions:
        wake_backend_for(choice)  # a store kind without a wake index fails here, before start

    def make_host() -> Host:
        backend = choice.open()
        return Host(
            backend=backend,
            model=adapter,
            plugins=overlay.plugins,
            close_retry_seconds=close_retry_seconds,
            clean_empty_sessions=True,
            lease_settings=leases,
            wake_backend=(
                wake_backend_for(choice, backend) if overlay.host.wake_cold_sessions else None
            ),
            idle_seconds=overlay.host.idle_seconds or None,
            heap=HeapPolicy(),  # a long-running server: long-lived objects are frozen
        )

    return make_host


def run_web(
    *,
    overlay: Overlay,
    choice: BackendChoice,
    model: str,
    host: str,
    port: int,
    allowed_hosts: Sequence[str] = (),
    trusted_proxies: Sequence[str] = (),
    access_log: bool = False,
    log_format: LogFormat = "text",
    stdout: TextIO,
    stop_grace: float = CLOSE_RETRY_SECONDS,
    token_path: Path,
    new_token: bool = False,
) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit code (0 after a clean stop).

    `token_path` is where the access token is kept (`token_file.token_path`);
    `new_token` replaces it. Raises `LaunchError` for anything wrong before or
    during start-up (another `dsh web` holding the store, an unusable token
    file included), and after a stop that left some Sessions not fully stored
    (naming them).
    """
    try:
        warnings = check_plugins(overlay)
        make_host = make_host_factory(overlay, choice, model, close_retry_seconds=stop_grace)
    except (PluginError, ValueError) as error:
        raise LaunchError(str(error), getattr(error, "problems", ())) from error
    _check_data_dir(choice)
    lock = choice.writer_lock()
    try:
        if lock is not None:
            lock.acquire()
    except StorageError as error:
        raise LaunchError(str(error)) from error
    try:
        settings = WebSettings(
            token=choose_token(token_path, new=new_token).token,
            host=host,
            port=port,
            allowed_hosts=tuple(allowed_hosts),
            trusted_proxies=tuple(trusted_proxies),
            access_log=access_log,
            log_format=log_format,
        )
    except (TokenError, ValueError) as error:
        if lock is not None:
            lock.release()
        raise LaunchError(str(error)) from error
    try:
        prepared = choice.prepare()  # reachable, and its tables up to date: or one line
    except StorageError as error:
        if lock is not None:
            lock.release()
        raise LaunchError(str(error)) from error
    if prepared is not None:
        logging.getLogger(__name__).info("store: %s", prepared)
    hosts: list[Host] = []

    def tracked() -> Host:
        built = make_host()
        hosts.append(built)
        return built

    try:
        if not logging.getLogger().handlers:
            # A log line may quote a title, a file name or a model's error: shown as text.
            handler = logging.StreamHandler()
            handler.setFormatter(log_formatter(log_format))
            logging.basicConfig(level=logging.INFO, handlers=[handler])
        for warning in warnings:
            logging.getLogger(__name__).warning("%s", warning)
        anyio.run(_serve, settings, tracked, stdout, _remember(choice, overlay))
    except (WebStartupError, PluginError, StorageError, OSError) as error:
        raise LaunchError(str(error)) from error
    finally:
        remembered = _web_dir(choice)
        if remembered is not None:
            forget_run(remembered)  # stopped, cleanly or not: no web.json left to mislead
        if lock is not None:
            lock.release()
    unstored = [session_id for built in hosts for session_id in built.unstored]
    if unstored:
        raise LaunchError(
            f"{len(unstored)} session{'s were' if len(unstored) > 1 else ' was'} not fully "
            f"stored when dsh web stopped: {', '.join(unstored)} (the log names the events)"
        )
    return EXIT_OK


def _check_data_dir(choice: BackendChoice) -> None:
    """A JSONL data dir may be missing (it is created), but not a file."""
    chosen = choice.settings
    directory = chosen.directory if isinstance(chosen, JsonlSettings) else None
    if directory is not None and directory.exists() and not directory.is_dir():
        raise LaunchError(
            f"the data dir {directory} is not a directory; pass a directory with --data-dir DIR"
        )


def _web_dir(choice: BackendChoice) -> Path | None:
    """Where `web.json` is kept: a JSONL store's data dir (other stores: nowhere)."""
    chosen = choice.settings
    return chosen.directory if isinstance(chosen, JsonlSettings) else None


def _remember(choice: BackendChoice, overlay: Overlay) -> Callable[[str], None] | None:
    """What to call once listening: keep `web.json` and `overlay.path` (`dsh.web.running`)."""
    directory = _web_dir(choice)
    if directory is None:
        return None
    source = overlay.path

    def remember(url: str) -> None:
        try:
            remember_run(directory, url, source)
        except OSError as error:  # the host serves on; only the commands will not find it
            logging.getLogger(__name__).warning(
                "cannot keep %s in %s: %s", WEB_FILE, directory, error.strerror or error
            )

    return remember


async def _serve(
    settings: WebSettings,
    make_host: Callable[[], Host],
    stdout: TextIO,
    on_listening: Callable[[str], None] | None,
) -> None:
    await serve(settings, make_host, stdout=stdout, on_listening=on_listening)
