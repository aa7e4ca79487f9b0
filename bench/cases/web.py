"""The web host over real HTTP: history pages and cold start.

Both run the command a user types — `dsh web --overlay overlays/web-schedule`
— as a subprocess, through the harness the lanes use
(`tests/support/webhost.py`), and talk to it over loopback HTTP with a
keep-alive client, so a figure is what a browser would wait for minus
connection set-up.

- `history`: `GET /api/sessions/{id}/events?before=N&limit=100` at random N
  on a live Session, then on a cold (stored, not live) one of the same length.
  The live Session's first page is reported apart (`live_first_ms`): it is
  when the host proves the stored prefix (reads the whole log once).
- `coldstart`: from spawning the process to the first 200 from `/api/health`
  (polled every 2 ms on a port chosen beforehand).
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.webhost import OVERLAY, REPO, WebHost

from ..sizes import Size
from ..stats import summary
from ..support import write_sessions
from .resume import session_events

__all__ = ["coldstart", "history"]

TOKEN = "bench-token-0123456789abcdef"


def history(size: Size, data_dir: Path) -> dict[str, Any]:
    now_ms = time.time_ns() // 1_000_000
    events = session_events(size.history_length, now_ms)
    write_sessions(data_dir, ["cold", "live"], events, created_at=now_ms)
    os.sync()
    rng = random.Random(8)
    times: dict[str, list[float]] = {"cold": [], "live": []}
    with (
        WebHost.start(data_dir, overlay=OVERLAY, token=TOKEN) as web,
        httpx.Client(base_url=web.base_url, headers=web.headers, timeout=120) as client,
    ):
        start = time.perf_counter()
        resumed = client.post("/api/sessions/live/resume")
        resume_s = time.perf_counter() - start
        resumed.raise_for_status()
        # One more live page than cold ones: the first proves the stored prefix.
        plan = ["live"] * (size.history_requests + 1) + ["cold"] * size.history_requests
        for session_id in plan:
            before = rng.randrange(100, size.history_length)
            start = time.perf_counter()
            response = client.get(
                f"/api/sessions/{session_id}/events",
                params={"before": before, "limit": 100},
            )
            times[session_id].append((time.perf_counter() - start) * 1000)
            response.raise_for_status()
            page = response.json()
            assert len(page["events"]) == 100, page.keys()
            assert page["attached"] is (session_id == "live")
    return {
        "events": size.history_length,
        "requests": size.history_requests,
        "live_resume_over_http_ms": round(resume_s * 1000, 1),
        "live_first_ms": round(times["live"][0], 2),
        "live_ms": summary(times["live"][1:], 2),
        "cold_ms": summary(times["cold"], 2),
    }


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _dsh_command() -> list[str]:
    script = Path(sys.executable).with_name("dsh")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dsh.cli"]


def coldstart(size: Size, data_dir: Path) -> dict[str, Any]:
    samples: list[float] = []
    env = {**os.environ, "DSH_TOKEN": TOKEN}
    for round_ in range(size.coldstart_rounds):
        port = _free_port()
        command = [
            *_dsh_command(),
            "web",
            "--overlay",
            str(OVERLAY),
            "--data-dir",
            str(data_dir / f"cold{round_}"),
            "--port",
            str(port),
        ]
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
                            break
                    except httpx.TransportError:
                        pass
                    if process.poll() is not None:
                        raise RuntimeError(f"dsh web exited with {process.returncode}")
                    if time.perf_counter() - start > 30:
                        raise TimeoutError("dsh web did not answer /api/health within 30 s")
                    time.sleep(0.002)
            samples.append((time.perf_counter() - start) * 1000)
        finally:
            process.terminate()
            process.wait(timeout=20)
    return {
        "command": "dsh web --overlay overlays/web-schedule",
        "to_first_200_ms": summary(samples, 1),
    }
