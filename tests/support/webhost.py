"""Boot `dsh web` as a real subprocess and drive it over HTTP and the WebSocket.

Lanes, the browser scenario, the reliability rounds and the benchmarks share
this harness, so every one of them exercises the same command a user types.

    with WebHost.start(data_dir, overlay=OVERLAY, model="scripted:/path.json") as web:
        session = web.post("/api/sessions").json()["session"]
        web.kill()            # SIGKILL: no graceful shutdown
        web.restart()         # same data dir, same token, a new port

`token=None` starts `dsh web` without `DSH_TOKEN`, as a person would: the
token is the one it prints (kept in `<data dir>/token` across restarts).

Waiting is always for a condition with a deadline (`wait_for`), never for a
fixed time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote

import httpx

__all__ = ["OVERLAY", "REPO", "WebHost", "wait_for"]

REPO = Path(__file__).resolve().parents[2]
OVERLAY = REPO / "overlays" / "web-schedule"
_URL = re.compile(r"dsh web: (http://[^\s]+)\?token=([^\s]+)")
T = TypeVar("T")


def wait_for(
    probe: Callable[[], T | None], *, timeout: float = 20.0, interval: float = 0.02, what: str = ""
) -> T:
    """Call `probe` until it returns something other than None/False; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what or probe!r}")
        time.sleep(interval)


@dataclass
class WebHost:
    """One `dsh web` process (restartable on the same data dir)."""

    data_dir: Path
    overlay: Path | None = OVERLAY
    model: str | None = None
    token: str | None = "lane-token-0123456789abcdef"
    python: str = sys.executable
    dsh: list[str] | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen[str] | None = None
    base_url: str = ""
    output: list[str] = field(default_factory=list)
    printed_token: str = ""
    _reader: threading.Thread | None = None
    # One client for every request: a fresh httpx client per call costs ~0.1 s
    # (it loads the CA bundle), which made polling loops slow.
    _http: httpx.Client | None = field(default=None, repr=False)

    @classmethod
    @contextmanager
    def start(cls, data_dir: Path, **options: Any) -> Iterator[WebHost]:
        web = cls(data_dir=data_dir, **options)
        web.boot()
        try:
            yield web
        except BaseException as failure:
            # What the host printed is often the cause of a test's failure.
            failure.add_note(web.tail())
            raise
        finally:
            web.stop()

    # -- process control --------------------------------------------------

    def command(self) -> list[str]:
        base = self.dsh or [self.python, "-m", "dsh.cli"]
        args = [*base, "web", "--data-dir", str(self.data_dir), "--port", "0"]
        if self.overlay is not None:
            args += ["--overlay", str(self.overlay)]
        if self.model is not None:
            args += ["--model", self.model]
        return args + self.extra_args

    def boot(self, timeout: float = 30.0) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.extra_env}
        if self.token is None:
            env.pop("DSH_TOKEN", None)
        else:
            env["DSH_TOKEN"] = self.token
        self.output = []
        self.process = subprocess.Popen(
            self.command(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=REPO,
        )
        self._reader = threading.Thread(target=self._pump, args=(self.process,), daemon=True)
        self._reader.start()

        def announced() -> str | None:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"dsh web exited with {self.process.returncode}:\n" + "".join(self.output)
                )
            for line in list(self.output):
                match = _URL.search(line)
                if match:
                    self.printed_token = unquote(match.group(2))
                    return match.group(1).rstrip("/")
            return None

        self.base_url = wait_for(announced, timeout=timeout, what="dsh web to print its URL")

    def _pump(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        # The pipe is closed here, at EOF: an unclosed one is a ResourceWarning
        # (an error under `filterwarnings = error`) when its Popen is collected.
        with process.stdout:
            for line in process.stdout:
                self.output.append(line)

    def tail(self, lines: int = 60) -> str:
        """The last `lines` lines this host printed, headed for a failure report."""
        shown = "".join(self.output[-lines:]).rstrip()
        return f"--- dsh web ({self.data_dir}), last {lines} lines ---\n{shown}"

    def kill(self) -> None:
        """SIGKILL: the process gets no chance to flush or close anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait for the graceful shutdown; returns the exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout)

    def restart(self, *, graceful: bool = False) -> None:
        """Stop (SIGKILL, or SIGTERM when `graceful`) and boot again on the same data dir."""
        if graceful:
            self.terminate()
        else:
            self.kill()
        if self._reader is not None:
            # The old process's last lines must not land in the new output.
            self._reader.join(timeout=5)
        self.boot()

    def stop(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
        if self.process is not None and self.process.poll() is None:
            try:
                self.terminate(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self._reader is not None:
            self._reader.join(timeout=5)

    # -- HTTP -------------------------------------------------------------

    @property
    def access_token(self) -> str:
        """The token this host serves with: the one given, else the one it printed."""
        return self.token if self.token is not None else self.printed_token

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}

    @property
    def page_url(self) -> str:
        return f"{self.base_url}/?token={quote(self.access_token, safe='')}"

    @property
    def ws_base(self) -> str:
        return self.base_url.replace("http://", "ws://", 1)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers, **kwargs.pop("headers", {})}
        if self._http is None:
            self._http = httpx.Client(timeout=30)
        return self._http.request(method, self.base_url + path, headers=headers, **kwargs)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if body is not None:
            kwargs["json"] = body
        return self.request("POST", path, **kwargs)

    # -- conveniences -----------------------------------------------------

    def create_session(self) -> str:
        response = self.post("/api/sessions")
        assert response.status_code == 201, response.text
        return str(response.json()["session"]["id"])

    def events(self, session_id: str, **params: Any) -> dict[str, Any]:
        response = self.get(f"/api/sessions/{session_id}/events", params=params or None)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def all_events(self, session_id: str) -> dict[str, Any]:
        """The whole log (paged from seq 0) with every view."""
        events: list[dict[str, Any]] = []
        views: dict[str, Any] = {}
        page: dict[str, Any] = {}
        start = 0
        while True:
            page = self.events(session_id, **{"from": start, "limit": 500})
            events += page["events"]
            views.update(page["views"])
            if not page["events"] or len(events) >= page["tail"]:
                break
            start = events[-1]["seq"] + 1
        return {**page, "events": events, "views": views}

    def stored_log(self, session_id: str) -> list[dict[str, Any]]:
        """The JSONL file as parsed lines (header first), ignoring a torn tail."""
        path = self.data_dir / "sessions" / f"{session_id}.jsonl"
        lines: list[dict[str, Any]] = []
        for raw in path.read_text(encoding="utf-8").split("\n"):
            if not raw:
                continue
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError:
                break
        return lines
