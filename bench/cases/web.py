"""The web host over real HTTP: history pages and cold start.

Both run the command a user types — `dsh web --overlay overlays/web-schedule`
— as a subprocess, through the harness the lanes use
(`tests/support/webhost.py`), and talk to it over loopback HTTP with a
keep-alive client, so a figure is what a browser would wait for minus
connection set-up.

- `history`: for each length (small and large), a data dir of five Sessions
  of that length; then `GET /api/sessions`, the WebSocket hello of a cold
  Session (connect → first frame), `GET /api/sessions/{id}/events?before=N&limit=100`
  at random N on the cold Session, and the same page and hello once another
  one is resumed (live). Every figure reports its first request apart
  (`first_ms`: whatever is cached is built then, such as the line index of a
  file nobody indexed yet, or the proof of a live Session's stored prefix)
  and the median of the rest.
- `coldstart`: from spawning the process to the first 200 from `/api/health`
  (polled every 2 ms on a port chosen beforehand).
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from tests.support.webhost import OVERLAY, REPO, WebHost
from websockets.sync.client import connect
from websockets.typing import Origin

from ..sizes import Size
from ..stats import summary
from ..support import write_sessions
from .resume import session_events

__all__ = ["coldstart", "history"]

TOKEN = "bench-token-0123456789abcdef"
SESSIONS = ("cold", "live", "other-1", "other-2", "other-3")


def history(size: Size, data_dir: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"requests": size.history_requests, "sessions": len(SESSIONS)}
    for length in size.history_lengths:
        result[f"events_{length}"] = _history_at(
            length, size.history_requests, data_dir / str(length)
        )
    return result


def _history_at(length: int, requests: int, data_dir: Path) -> dict[str, Any]:
    """Every figure of `history` on a data dir whose Sessions all hold `length` events."""
    now_ms = time.time_ns() // 1_000_000
    paths = write_sessions(data_dir, SESSIONS, session_events(length, now_ms), created_at=now_ms)
    os.sync()
    rng = random.Random(8)
    with (
        WebHost.start(data_dir, overlay=OVERLAY, token=TOKEN) as web,
        httpx.Client(base_url=web.base_url, headers=web.headers, timeout=120) as client,
    ):

        def listing() -> None:
            response = client.get("/api/sessions")
            response.raise_for_status()
            assert len(response.json()["sessions"]) == len(SESSIONS)

        def page(session_id: str) -> None:
            before = rng.randrange(100, length)
            response = client.get(
                f"/api/sessions/{session_id}/events", params={"before": before, "limit": 100}
            )
            response.raise_for_status()
            body = response.json()
            assert len(body["events"]) == 100, body.keys()
            assert body["attached"] is (session_id == "live")

        figures: dict[str, Any] = {"file_mib": round(paths[0].stat().st_size / 2**20, 2)}
        figures["list"] = _timed(listing, requests)
        figures["hello"] = _timed(lambda: _hello(web, "cold"), requests)
        figures["cold"] = _timed(lambda: page("cold"), requests)
        start = time.perf_counter()
        client.post("/api/sessions/live/resume").raise_for_status()
        figures["live_resume_over_http_ms"] = round((time.perf_counter() - start) * 1000, 1)
        figures["live"] = _timed(lambda: page("live"), requests)
        figures["live_hello"] = _timed(lambda: _hello(web, "live"), requests)
    return figures


def _timed(call: Callable[[], None], requests: int) -> dict[str, Any]:
    """The first call's time apart (it builds whatever is cached), then the median of the rest."""
    samples: list[float] = []
    for _ in range(requests + 1):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return {"first_ms": round(samples[0], 2), "ms": summary(samples[1:], 2)}


def _hello(web: WebHost, session_id: str) -> None:
    """Open the live stream and wait for its hello frame (the close is not timed)."""
    url = f"{web.ws_base}/api/sessions/{session_id}/live?token={TOKEN}"
    with connect(url, origin=Origin(web.base_url), open_timeout=120, compression=None) as ws:
        frame = json.loads(ws.recv(timeout=120))
        assert frame["kind"] == "hello", frame


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _dsh_command() -> list[str]:
    script = Path(sys.executable).with_name("dsh")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dsh.cli"]


def first_200_ms(overlay: Path, data_dir: Path, *, timeout: float = 30.0) -> float:
    """`dsh web --overlay <overlay>` spawned → first 200 from `/api/health`, in ms
    (polled every 2 ms on a port chosen beforehand); the process is stopped after."""
    port = _free_port()
    command = [
        *_dsh_command(),
        "web",
        "--overlay",
        str(overlay),
        "--data-dir",
        str(data_dir),
        "--port",
        str(port),
    ]
    env = {**os.environ, "DSH_TOKEN": TOKEN}
    url = f"http://127.0.0.1:{port}/api/health"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    # Built before the clock starts: creating a client loads the CA bundle (~0.1 s).
    client = httpx.Client(timeout=1)
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with client:
            while True:
                try:
                    if client.get(url, headers=headers).status_code == 200:
                        return (time.perf_counter() - start) * 1000
                except httpx.TransportError:
                    pass
                if process.poll() is not None:
                    raise RuntimeError(f"dsh web exited with {process.returncode}")
                if time.perf_counter() - start > timeout:
                    raise TimeoutError(f"dsh web did not answer /api/health within {timeout} s")
                time.sleep(0.002)
    finally:
        process.terminate()
        process.wait(timeout=60)


def coldstart(size: Size, data_dir: Path) -> dict[str, Any]:
    samples = [
        first_200_ms(OVERLAY, data_dir / f"cold{round_}") for round_ in range(size.coldstart_rounds)
    ]
    return {
        "command": "dsh web --overlay overlays/web-schedule",
        "to_first_200_ms": summary(samples, 1),
    }
