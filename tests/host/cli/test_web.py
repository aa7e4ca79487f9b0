from __future__ import annotations

import argparse
import io
import json
import logging
import os
import signal
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

from dsh.cli import COMMANDS, main
from dsh.cli.app import Streams, build_parser
from dsh.host.host import Host
from dsh.host.leases import LeaseSettings
from dsh.persistence import JsonlBackend
from dsh.persistence.backends import choose_backend
from dsh.plugins.overlay import Overlay, parse_overlay
from dsh.web import launch as web_launch
from dsh.web.launch import make_host_factory

TOKEN = "cli-token-Qw7-0123456789"


def parse(*argv: str) -> argparse.Namespace:
    parser = build_parser(COMMANDS, Streams(io.StringIO(), io.StringIO()))
    return parser.parse_args(["web", *argv])


def run_from_args(args: argparse.Namespace, stdout: io.StringIO, stderr: Any = None) -> int:
    """Run parsed `dsh web` arguments the way `dsh` does."""
    argv = ["web"]
    for option in ("overlay", "data_dir", "host", "port", "model"):
        value = getattr(args, option)
        if value is not None:
            argv += [f"--{option.replace('_', '-')}", str(value)]
    for extra in args.allow_host:
        argv += ["--allow-host", extra]
    return main(argv, stdout=stdout, stderr=stderr or io.StringIO())


def test_the_defaults_are_loopback_8765_and_no_overlay() -> None:
    args = parse()
    assert (args.overlay, args.data_dir, args.host, args.port, args.model, args.allow_host) == (
        None,
        None,
        "127.0.0.1",
        8765,
        None,
        [],
    )
    assert args.access_log is False


def test_every_option_is_read() -> None:
    args = parse(
        "--overlay",
        "o",
        "--data-dir",
        "d",
        "--host",
        "::1",
        "--port",
        "0",
        "--model",
        "absent",
        "--allow-host",
        "a",
        "--allow-host",
        "b:1",
        "--access-log",
    )
    assert args.overlay == Path("o") and args.data_dir == Path("d") and args.access_log
    assert (args.host, args.port, args.model, args.allow_host) == ("::1", 0, "absent", ["a", "b:1"])


def test_the_host_factory_uses_the_chosen_store_and_the_overlay_plugins(tmp_path: Path) -> None:
    make_host = make_host_factory(Overlay.default(), choose_backend(None, tmp_path), "absent")
    host = make_host()
    assert isinstance(host, Host) and isinstance(host.backend, JsonlBackend)
    assert host.backend.directory == tmp_path / "sessions"
    assert host.model.name == "absent"
    assert host.close_retry_seconds == web_launch.CLOSE_RETRY_SECONDS
    assert make_host() is not host


def test_the_host_dsh_web_runs_cleans_sessions_left_unused(tmp_path: Path) -> None:
    make_host = make_host_factory(Overlay.default(), choose_backend(None, tmp_path), "absent")
    assert make_host().clean_empty_sessions is True


def test_a_busy_port_is_one_line_naming_it_and_the_option(tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    err = io.StringIO()
    try:
        code = main(
            ["web", "--data-dir", str(tmp_path), "--port", str(port)],
            stdout=io.StringIO(),
            stderr=err,
        )
    finally:
        taken.close()
    assert code == 1
    assert err.getvalue() == (
        f"dsh: error: port {port} is already in use on 127.0.0.1 (another dsh web, or another "
        "program); choose another with --port N, or --port 0 for a free one\n"
    )


def test_a_data_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    not_a_directory = tmp_path / "file"
    not_a_directory.write_text("", encoding="utf-8")
    err = io.StringIO()
    code = main(["web", "--data-dir", str(not_a_directory)], stdout=io.StringIO(), stderr=err)
    assert code == 1
    assert err.getvalue() == (
        f"dsh: error: the data dir {not_a_directory} is not a directory; "
        "pass a directory with --data-dir DIR\n"
    )


def test_a_missing_overlay_is_an_error_naming_the_file(tmp_path: Path) -> None:
    err = io.StringIO()
    code = main(["web", "--overlay", str(tmp_path / "none.toml")], stdout=io.StringIO(), stderr=err)
    assert code == 1
    assert err.getvalue().startswith("dsh: error: ") and "none.toml" in err.getvalue()


def test_an_unknown_model_is_a_usage_error() -> None:
    err = io.StringIO()
    assert main(["web", "--model", "nonsense"], stdout=io.StringIO(), stderr=err) == 2
    assert "nonsense" in err.getvalue()


def test_a_model_that_cannot_be_configured_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DSH_MODEL_BASE_URL", "DSH_MODEL", "DSH_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    err = io.StringIO()
    code = main(
        ["web", "--model", "openai", "--data-dir", str(tmp_path)], stdout=io.StringIO(), stderr=err
    )
    assert code == 1
    assert "export DEEPSEEK_API_KEY=" in err.getvalue()
    assert "Traceback" not in err.getvalue()


@pytest.fixture
def quiet_uvicorn() -> Iterator[None]:
    """uvicorn installs its own log handlers; put the loggers back afterwards."""
    loggers = [logging.getLogger(name) for name in ("uvicorn", "uvicorn.error", "uvicorn.access")]
    saved = [(logger.handlers[:], logger.propagate, logger.level) for logger in loggers]
    yield
    for logger, (handlers, propagate, level) in zip(loggers, saved, strict=True):
        logger.handlers[:] = handlers
        logger.propagate = propagate
        logger.setLevel(level)


def test_a_plugin_that_is_not_installed_fails_with_exit_1(
    tmp_path: Path, quiet_uvicorn: None
) -> None:
    overlay = tmp_path / "overlay.toml"
    overlay.write_text("[plugins.not-installed-anywhere]\n", encoding="utf-8")
    err = io.StringIO()
    code = run_from_args(
        parse("--overlay", str(overlay), "--port", "0", "--data-dir", str(tmp_path)),
        io.StringIO(),
        err,
    )
    assert code == 1
    assert "not-installed-anywhere" in err.getvalue()
    assert "dsh-not-installed-anywhere" in err.getvalue()
    assert "Traceback" not in err.getvalue()


def test_an_interrupt_before_the_server_runs_exits_130(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(web_launch, "_serve", interrupted)
    err = io.StringIO()
    assert run_from_args(parse("--data-dir", str(tmp_path)), io.StringIO(), err) == 130
    assert "interrupted" in err.getvalue()


class Announcements(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.announced = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        self.announced.set()
        return written


def test_dsh_web_serves_until_sigterm_then_exits_0_with_sessions_stored(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    quiet_uvicorn: None,
) -> None:
    monkeypatch.setenv("DSH_TOKEN", TOKEN)
    stdout = Announcements()
    seen: dict[str, object] = {}

    def drive() -> None:
        try:
            assert stdout.announced.wait(10)
            url = stdout.getvalue().strip().removeprefix("dsh web: ")
            base = url.split("/?")[0]
            with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
                created = http.post("/api/sessions").json()["session"]
                seen["id"] = created["id"]
                live = base.replace("http://", "ws://")
                with connect(
                    f"{live}/api/sessions/{created['id']}/live?token={TOKEN}",
                    origin=base,  # type: ignore[arg-type]
                    open_timeout=5,
                ) as ws:
                    seen["hello"] = json.loads(ws.recv(timeout=5))
                    http.post(f"/api/sessions/{created['id']}/messages", json={"text": "hi"})
                    seen["first"] = json.loads(ws.recv(timeout=5))
            seen["url"] = url
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    helper = threading.Thread(target=drive)
    helper.start()
    code = run_from_args(
        parse("--port", "0", "--data-dir", str(tmp_path), "--model", "absent"), stdout
    )
    helper.join(10)
    assert code == 0
    assert str(seen["url"]).endswith(f"/?token={TOKEN}")
    assert seen["hello"] == {"kind": "hello", "tail": 0}
    assert seen["first"] == {
        "kind": "event",
        "event": {
            "seq": 0,
            "type": "message/user",
            "time": seen["first"]["event"]["time"],  # type: ignore[index]
            "data": {"text": "hi", "source": {"kind": "user"}},
        },
    }
    stored = tmp_path / "sessions" / f"{seen['id']}.jsonl"
    lines = stored.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1])["type"] == "message/user"
    logged = capfd.readouterr().err
    assert TOKEN not in logged
    assert "token=[redacted]" in logged


def test_logging_is_configured_only_when_nothing_else_did(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    configured: list[dict[str, object]] = []

    async def served(*_: object) -> None:
        return None

    monkeypatch.setattr(web_launch, "_serve", served)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    monkeypatch.setattr(logging, "basicConfig", lambda **kwargs: configured.append(kwargs))
    assert run_from_args(parse("--data-dir", str(tmp_path)), io.StringIO(), io.StringIO()) == 0
    assert configured and configured[0]["level"] == logging.INFO
    (handler,) = configured[0]["handlers"]  # type: ignore[misc]
    record = logging.LogRecord("dsh", logging.WARNING, "", 0, "title %s", ("\x1b]0;x\x07",), None)
    assert handler.format(record) == "WARNING dsh: title \\u001b]0;x\\u0007"  # shown as text


@pytest.mark.parametrize(("flag", "expected"), [((), False), (("--access-log",), True)])
def test_access_log_is_off_unless_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flag: tuple[str, ...], expected: bool
) -> None:
    seen: list[object] = []

    async def served(settings: object, *_: object) -> None:
        seen.append(settings)

    monkeypatch.setattr(web_launch, "_serve", served)
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["web", "--data-dir", str(tmp_path), *flag], stdout=stdout, stderr=stderr) == 0
    assert [getattr(settings, "access_log", None) for settings in seen] == [expected]


@pytest.mark.parametrize("given", ["abc", "-1", "3601"])
def test_a_stop_grace_that_is_not_a_sensible_number_of_seconds_is_a_usage_error(
    given: str,
) -> None:
    err = io.StringIO()
    assert main(["web", "--stop-grace", given], stdout=io.StringIO(), stderr=err) == 2
    assert "--stop-grace" in err.getvalue()


def test_the_stop_grace_reaches_the_host_factory() -> None:
    assert parse("--stop-grace", "2.5").stop_grace == 2.5
    assert parse().stop_grace == web_launch.CLOSE_RETRY_SECONDS


def test_an_unreachable_postgresql_store_stops_dsh_web_before_it_serves(
    tmp_path: Path, quiet_uvicorn: None
) -> None:
    err = io.StringIO()
    store = f"postgresql://me:hunter2@/dsh?host={tmp_path}&connect_timeout=1"
    code = main(["web", "--port", "0", "--store", store], stdout=io.StringIO(), stderr=err)
    assert code == 1
    assert err.getvalue().startswith("dsh: error: PostgreSQL at postgresql://me@/dsh")
    assert "hunter2" not in err.getvalue() and "Traceback" not in err.getvalue()


def test_the_overlays_lease_timing_reaches_the_host(tmp_path: Path) -> None:
    overlay = parse_overlay("[store]\nlease_ttl_seconds = 6\nlease_renew_seconds = 2\n")
    host = make_host_factory(overlay, choose_backend(None, tmp_path), "absent")()
    assert host.lease_settings == LeaseSettings(ttl_seconds=6, renew_seconds=2)


def served_tokens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tokens `dsh web` would serve with, one per run (nothing is served)."""
    tokens: list[str] = []

    async def served(settings: Any, *_: object) -> None:
        tokens.append(settings.token)

    monkeypatch.setattr(web_launch, "_serve", served)
    return tokens


def test_without_dsh_token_the_token_is_kept_in_the_data_dir_and_reused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    for _ in range(2):
        assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO()) == 0
    kept = (tmp_path / "token").read_text(encoding="ascii").strip()
    assert tokens == [kept, kept]
    assert (tmp_path / "token").stat().st_mode & 0o777 == 0o600


def test_new_token_rotates_the_kept_token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO()) == 0
    argv = ["web", "--data-dir", str(tmp_path), "--new-token"]
    assert main(argv, stdout=io.StringIO()) == 0
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO()) == 0
    assert tokens[0] != tokens[1] == tokens[2]
    assert (tmp_path / "token").read_text(encoding="ascii").strip() == tokens[1]


def test_dsh_token_wins_over_the_kept_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO()) == 0
    monkeypatch.setenv("DSH_TOKEN", TOKEN)
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO()) == 0
    assert tokens[1] == TOKEN != tokens[0]
    assert (tmp_path / "token").read_text(encoding="ascii").strip() == tokens[0]


def test_the_token_of_a_jsonl_store_elsewhere_is_kept_with_its_sessions(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    argv = ["web", "--data-dir", str(tmp_path / "data"), "--store", f"jsonl:{tmp_path / 'logs'}"]
    assert main(argv, stdout=io.StringIO()) == 0
    assert (tmp_path / "logs" / "token").read_text(encoding="ascii").strip() == tokens[0]
    assert not (tmp_path / "data" / "token").exists()


def test_an_unusable_token_file_is_one_line_with_exit_1_and_releases_the_lock(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    (tmp_path / "token").write_text("kept-token-value\n", encoding="ascii")
    (tmp_path / "token").chmod(0o644)
    err = io.StringIO()
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO(), stderr=err) == 1
    assert err.getvalue() == (
        f"dsh: error: the token file {tmp_path / 'token'} is open to other users (mode 0644); "
        f"run `chmod 600 {tmp_path / 'token'}`, or start with --new-token to replace it\n"
    )
    assert tokens == []
    # The lock was given back: the next start (with the fix) runs.
    (tmp_path / "token").chmod(0o600)
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO()) == 0
    assert tokens == ["kept-token-value"]


def test_new_token_with_dsh_token_set_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DSH_TOKEN", TOKEN)
    tokens = served_tokens(monkeypatch)
    err = io.StringIO()
    argv = ["web", "--data-dir", str(tmp_path), "--new-token"]
    assert main(argv, stdout=io.StringIO(), stderr=err) == 1
    assert "--new-token cannot replace the token while $DSH_TOKEN is set" in err.getvalue()
    assert tokens == []


def test_a_token_error_with_a_store_that_takes_no_lock_is_the_same_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DSH_TOKEN", TOKEN)
    tokens = served_tokens(monkeypatch)
    err = io.StringIO()
    argv = ["web", "--data-dir", str(tmp_path), "--store", "memory:", "--new-token"]
    assert main(argv, stdout=io.StringIO(), stderr=err) == 1
    assert "--new-token cannot replace the token while $DSH_TOKEN is set" in err.getvalue()
    assert tokens == []


@pytest.mark.parametrize(
    ("flag", "environment", "expected"),
    [((), None, "text"), (("--log-format", "json"), None, "json"), ((), "JSON", "json"),
     (("--log-format", "text"), "json", "text")],
)  # fmt: skip
def test_the_log_format_comes_from_the_flag_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    flag: tuple[str, ...],
    environment: str | None,
    expected: str,
) -> None:
    seen: list[object] = []

    async def served(settings: object, *_: object) -> None:
        seen.append(settings)

    monkeypatch.setattr(web_launch, "_serve", served)
    if environment is None:
        monkeypatch.delenv("DSH_LOG_FORMAT", raising=False)
    else:
        monkeypatch.setenv("DSH_LOG_FORMAT", environment)
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["web", "--data-dir", str(tmp_path), *flag], stdout=stdout, stderr=stderr) == 0
    assert [getattr(settings, "log_format", None) for settings in seen] == [expected]


def test_an_unknown_log_format_in_the_environment_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DSH_LOG_FORMAT", "xml")
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(["web", "--data-dir", str(tmp_path)], stdout=stdout, stderr=stderr) != 0
    assert "$DSH_LOG_FORMAT is 'xml'; use one of: text, json" in stderr.getvalue()


def test_proxies_are_trusted_only_when_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[object] = []

    async def served(settings: object, *_: object) -> None:
        seen.append(settings)

    monkeypatch.setattr(web_launch, "_serve", served)
    streams = io.StringIO(), io.StringIO()
    assert main(["web", "--data-dir", str(tmp_path)], stdout=streams[0], stderr=streams[1]) == 0
    named = ["web", "--data-dir", str(tmp_path), "--trust-proxy", "127.0.0.1"]
    assert main([*named, "--trust-proxy", "10.0.0.0/8"], stdout=streams[0], stderr=streams[1]) == 0
    assert [getattr(settings, "trusted_proxies", None) for settings in seen] == [
        (),
        ("127.0.0.1", "10.0.0.0/8"),
    ]
    stderr = io.StringIO()
    assert main([*named[:-1], "*"], stdout=io.StringIO(), stderr=stderr) != 0
    assert "trusted proxy '*' is not an IP address or network" in stderr.getvalue()


@pytest.mark.parametrize("given", ["a", "   ", "two-lines-of-token\nsecond-line-here"])
def test_a_weak_dsh_token_stops_dsh_web_with_one_line_naming_the_rule(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, given: str
) -> None:
    monkeypatch.setenv("DSH_TOKEN", given)
    tokens = served_tokens(monkeypatch)
    err = io.StringIO()
    assert main(["web", "--data-dir", str(tmp_path)], stdout=io.StringIO(), stderr=err) == 1
    (line,) = err.getvalue().splitlines()
    assert line.startswith("dsh: error: $DSH_TOKEN is not a usable access token: it ")
    assert "at least 16 characters, no whitespace or control characters" in line
    assert tokens == []
    assert not (tmp_path / "token").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away needs root")
@pytest.mark.parametrize("store", [None, "memory:"])
def test_dsh_web_refuses_a_data_dir_or_token_file_that_is_not_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, store: str | None
) -> None:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    data = tmp_path / "dsh"
    data.mkdir(mode=0o700)
    planted = data / "token"
    planted.write_text("planted-by-another-user\n", encoding="ascii")
    planted.chmod(0o600)
    os.chown(planted, 65534, 65534)  # another user's, pre-planted
    argv = ["web", "--data-dir", str(data), *(["--store", store] if store else [])]

    err = io.StringIO()
    assert main(argv, stdout=io.StringIO(), stderr=err) == 1
    (line,) = err.getvalue().splitlines()
    assert line.startswith(f"dsh: error: {planted} belongs to user nobody (uid 65534)")
    assert tokens == [] and not (data / "lock").exists()

    planted.unlink()
    data.chmod(0o777)
    err = io.StringIO()
    assert main(argv, stdout=io.StringIO(), stderr=err) == 1
    assert f"the data dir {data} can be written by group and others (mode 0777)" in err.getvalue()

    data.chmod(0o700)  # what the message says to do
    assert main(argv, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert len(tokens) == 1


def test_dsh_web_makes_a_fresh_data_dir_0700_under_a_sticky_shared_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp, for README's `--data-dir /tmp/dsh`
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    tokens = served_tokens(monkeypatch)
    assert main(["web", "--data-dir", str(shared / "dsh")], stdout=io.StringIO()) == 0
    assert len(tokens) == 1
    assert (shared / "dsh").stat().st_mode & 0o777 == 0o700
