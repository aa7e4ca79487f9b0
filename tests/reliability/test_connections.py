"""Connection exhaustion against a real `dsh web`: slowloris and a low descriptor limit.

Both attacks run against `dsh web` started under a descriptor limit (`ulimit
-n`), the way the adversarial run that found them did:

- **slowloris**: `SLOWLORIS_CONNECTIONS` connections that never finish their
  request head, every closed one re-opened (up to 1,000 a second), against a
  1,024-descriptor limit. Before the fix the host answered nothing and the
  accept errors wrote megabytes of log a second.
- **descriptor limit**: a 160-descriptor limit whose Sessions already hold
  most descriptors (every live Session keeps its log open), then a slowloris:
  `accept()` itself runs out of descriptors.

Throughout, a client with the token asks `/api/health` on a fresh connection
every 50 ms: every answer must be 200. A WebSocket opened before the attack
must still deliver events after it, the log must stay a few lines long, and
nothing stored may be lost. The README's reliability table and
`test_the_readme_names_the_slowloris_figure` share `SLOWLORIS_CONNECTIONS`.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

from tests.support.webhost import REPO, WebHost

from .figures import Figures
from .raw_http import raw_request
from .slowloris import Probe, Slowloris, limited_dsh, raise_own_descriptor_limit

pytestmark = [pytest.mark.reliability]

SLOWLORIS_CONNECTIONS = 1100
SLOWLORIS_DESCRIPTORS = 1024
LOW_DESCRIPTORS = 160
SESSIONS_UNDER_LOW_LIMIT = 125
ATTACKERS_UNDER_LOW_LIMIT = 200
ATTACK_SECONDS = 8.0
PROBE_EVERY = 0.05
# What the test process itself needs besides the attacker's sockets.
OWN_DESCRIPTORS = 200


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def probe_health(web: WebHost, seconds: float) -> Probe:
    """Ask `/api/health` on a fresh connection every `PROBE_EVERY` s for `seconds`."""
    probe = Probe()
    deadline = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {web.token}", "Connection": "close"}
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            status: int | str = raw_request(web.base_url, "GET", "/api/health", headers).status
        except OSError as error:
            status = type(error).__name__
        probe.latencies.append(time.monotonic() - started)
        probe.statuses.append(status)
        time.sleep(PROBE_EVERY)
    return probe


def summed(lines: list[str], event: str) -> int:
    """The total of `event` over the connection summaries in `lines`."""
    pattern = re.compile(rf"(\d+) {event}\b")
    return sum(int(m.group(1)) for line in lines for m in pattern.finditer(line))


def port_of(web: WebHost) -> int:
    return int(web.base_url.rsplit(":", 1)[1])


def lines_since(web: WebHost, start: int) -> list[str]:
    return [line.rstrip("\n") for line in web.output[start:]]


@contextmanager
def watching(web: WebHost, session_id: str) -> Iterator[ClientConnection]:
    """A live WebSocket on `session_id`, past its hello frame."""
    url = f"{web.ws_base}/api/sessions/{session_id}/live?token={web.token}"
    with connect(url, origin=web.base_url, open_timeout=10) as ws:  # type: ignore[arg-type]
        assert json.loads(ws.recv(timeout=10))["kind"] == "hello"
        yield ws


def next_user_message(ws: ClientConnection) -> dict[str, Any]:
    while True:
        frame = json.loads(ws.recv(timeout=20))
        if frame.get("kind") == "event" and frame["event"]["type"] == "message/user":
            event: dict[str, Any] = frame["event"]
            return event


def attack_seconds(scale: int) -> float:
    return ATTACK_SECONDS * scale


def test_health_answers_every_time_while_slowloris_holds_its_connections(
    tmp_path: Path, figures: Figures, scale: int
) -> None:
    count = min(
        SLOWLORIS_CONNECTIONS,
        raise_own_descriptor_limit(SLOWLORIS_CONNECTIONS + OWN_DESCRIPTORS) - OWN_DESCRIPTORS,
    )
    web = WebHost(data_dir=tmp_path / "data", dsh=limited_dsh(SLOWLORIS_DESCRIPTORS))
    try:
        web.boot()
        pid = web.process.pid  # type: ignore[union-attr]
        session_id = web.create_session()
        with watching(web, session_id) as ws:
            before, cpu_before = len(web.output), cpu_seconds(pid)
            started = time.monotonic()
            with Slowloris(port_of(web), count) as attacker:
                probe = probe_health(web, attack_seconds(scale))
            elapsed = time.monotonic() - started
            cpu = (cpu_seconds(pid) - cpu_before) / elapsed
            logged = lines_since(web, before)
            accepted = web.post(f"/api/sessions/{session_id}/messages", {"text": "still here?"})
            assert accepted.status_code == 202
            assert next_user_message(ws)["data"]["text"] == "still here?"
        # The live frame is sent on append, before the flush: read the log once the
        # graceful shutdown has flushed every live Session.
        assert web.terminate() == 0
        stored = web.stored_log(session_id)
    finally:
        web.stop()
    failures = [s for s in probe.statuses if s != 200]
    assert probe.statuses and not failures, f"{len(failures)} of {len(probe.statuses)}: {failures}"
    assert attacker.closed_by_server > count, "the attack never made the server evict anyone"
    assert len(logged) <= 4 + elapsed / 10, logged
    assert any("connections:" in line and "evicted" in line for line in logged), logged
    assert [line["type"] for line in stored[1:]].count("message/user") == 1
    figures.section("connections")["slowloris"] = {
        "held": count,
        "descriptor_limit": SLOWLORIS_DESCRIPTORS,
        "seconds": round(elapsed, 1),
        "opened": attacker.opened,
        "closed_by_server": attacker.closed_by_server,
        "refused_503": attacker.refused,
        "health_probes": len(probe.statuses),
        "health_ok": probe.ok(),
        "health_median_ms": probe.median_ms(),
        "health_max_ms": probe.max_ms(),
        "log_lines": len(logged),
        "server_cpu_percent": round(cpu * 100),
        "websocket_kept": 1,
        "lost": 0,
    }


def test_running_out_of_descriptors_refuses_strangers_not_the_host(
    tmp_path: Path, figures: Figures, scale: int
) -> None:
    raise_own_descriptor_limit(ATTACKERS_UNDER_LOW_LIMIT + OWN_DESCRIPTORS)
    web = WebHost(data_dir=tmp_path / "data", dsh=limited_dsh(LOW_DESCRIPTORS))
    try:
        web.boot()
        # Every live Session keeps its log open: together they hold most descriptors.
        sessions = [web.create_session() for _ in range(SESSIONS_UNDER_LOW_LIMIT)]
        with watching(web, sessions[0]) as ws:
            before = len(web.output)
            started = time.monotonic()
            with Slowloris(port_of(web), ATTACKERS_UNDER_LOW_LIMIT) as attacker:
                probe = probe_health(web, attack_seconds(scale))
            elapsed = time.monotonic() - started
            logged = lines_since(web, before)
            # Everything still works once the attack is over.
            newcomer = web.create_session()
            for session_id in (sessions[0], newcomer):
                answer = web.post(f"/api/sessions/{session_id}/messages", {"text": "after"})
                assert answer.status_code == 202
            assert next_user_message(ws)["data"]["text"] == "after"
        assert web.terminate() == 0  # which writes the counts still pending
    finally:
        web.stop()
    failures = [s for s in probe.statuses if s != 200]
    assert probe.statuses and not failures, f"{len(failures)} of {len(probe.statuses)}: {failures}"
    exhausted = summed(lines_since(web, before), "descriptors_exhausted")
    assert exhausted > 0, lines_since(web, before)
    assert len(logged) <= 4 + elapsed / 10, logged
    stored = [web.stored_log(session_id) for session_id in (sessions[0], newcomer)]
    assert all([e["type"] for e in log[1:]].count("message/user") == 1 for log in stored)
    figures.section("connections")["descriptor_limit"] = {
        "descriptor_limit": LOW_DESCRIPTORS,
        "sessions_holding_descriptors": SESSIONS_UNDER_LOW_LIMIT,
        "attackers": ATTACKERS_UNDER_LOW_LIMIT,
        "seconds": round(elapsed, 1),
        "opened": attacker.opened,
        "closed_by_server": attacker.closed_by_server,
        "refused_503": attacker.refused,
        "accepts_out_of_descriptors": exhausted,
        "evicted": summed(lines_since(web, before), "evicted"),
        "health_probes": len(probe.statuses),
        "health_ok": probe.ok(),
        "health_median_ms": probe.median_ms(),
        "health_max_ms": probe.max_ms(),
        "log_lines": len(logged),
        "lost": 0,
    }


def test_the_readme_names_the_slowloris_figure() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| slowloris"))
    assert f"{SLOWLORIS_CONNECTIONS:,}" in row and f"{SLOWLORIS_DESCRIPTORS:,}" in row
