"""Dense cron catch-up: does a host stay responsive while it delivers a long outage's backlog?

The reproduction of issue 35 item 4: one Session holds N reminders
`cron "* * * * *"` (full: 40) in Europe/Berlin (so the outage spans a DST
change), each owing its first occurrence `catchup_days` ago (full: 80 days,
≈ 115,000 missed minutes each) — a host that was down that long. The case
runs the command a user types, `dsh web --overlay overlays/web-schedule`
(the demo model answers each reminder's turn), resumes the Session over HTTP
and, from the moment it asks, polls `GET /api/health` on a keep-alive client
(one request every `_POLL_GAP` s, from a thread of the bench process) until
the stored log holds a dispatch of every reminder and the turn that answers
the last one.

Figures: the health latency (p50/p99/max) before the resume (the idle host:
the limit it is judged against) and during the catch-up; how long the
catch-up took (resume asked → last dispatch stored, → last turn ended); and
the `missed` each dispatch stored (all equal here: each reminder missed the
same minutes), which the schedule plugin reports exactly below 100,000 and
as 100,000 ("100,000 or more") beyond.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from tests.support.webhost import OVERLAY, WebHost

from ..sizes import Size
from ..stats import summary
from ..support import format_ms, write_session

__all__ = ["catchup"]

TOKEN = "bench-token-0123456789abcdef"
SESSION = "catchup"
ZONE = "Europe/Berlin"
_POLL_GAP = 0.01
_MINUTE_MS = 60_000
_DAY_MS = 86_400_000


def cron_record(number: int, owed_ms: int) -> dict[str, Any]:
    """A protocol v2 `create` of `rem-<number>`: every minute, owing `owed_ms` first."""
    stamp = format_ms(owed_ms)
    return {
        "version": 2,
        "change": "create",
        "record": {
            "id": f"rem-{number}",
            "prompt": f"check the queue ({number})",
            "rule": {"kind": "cron", "cron": "* * * * *"},
            "timeZone": ZONE,
            "firstAt": stamp,
            "nextAt": stamp,
            "misfire": "latest",
            "paused": False,
            "revision": 1,
        },
    }


class _HealthPoller(threading.Thread):
    """GET /api/health in a loop on its own keep-alive client: `(started, ms)` per request."""

    def __init__(self, base_url: str) -> None:
        super().__init__(daemon=True)
        self.base_url = base_url
        self.samples: list[tuple[float, float]] = []
        self.errors = 0
        self.stop = threading.Event()

    def run(self) -> None:
        auth = {"Authorization": f"Bearer {TOKEN}"}  # a 401 is no health answer (and is throttled)
        with httpx.Client(base_url=self.base_url, headers=auth, timeout=60) as client:
            while not self.stop.is_set():
                started = time.perf_counter()
                try:
                    client.get("/api/health").raise_for_status()
                except httpx.HTTPError:
                    self.errors += 1
                self.samples.append((started, (time.perf_counter() - started) * 1000))
                self.stop.wait(_POLL_GAP)

    def between(self, start: float, end: float) -> list[float]:
        return [ms for started, ms in list(self.samples) if start <= started <= end]


def _progress(web: WebHost) -> tuple[int, int, list[int]]:
    """`(reminders dispatched, reminders whose turn ended, missed of each dispatch)` so far."""
    dispatched: set[str] = set()
    answered: set[str] = set()
    missed: list[int] = []
    turn_of: list[str] = []
    for line in web.stored_log(SESSION)[1:]:
        kind, data = line.get("type"), line.get("data") or {}
        if kind == "schedule/change" and data.get("change") == "dispatch":
            dispatched.add(str(data["id"]))
            missed.append(int(data["missed"]))
        elif kind == "message/user":
            source = data.get("source") or {}
            # A delivery of reminders due in the same second names them all (`scheduleIds`).
            ids = source.get("scheduleIds") or [source.get("scheduleId")]
            turn_of = [str(i) for i in ids] if source.get("kind") == "schedule" else []
        elif kind == "turn/end" and turn_of:
            answered.update(turn_of)
            turn_of = []
    return len(dispatched), len(answered), missed


def catchup(size: Size, data_dir: Path) -> dict[str, Any]:
    """N `* * * * *` reminders owed since `catchup_days` ago, resumed (module docstring)."""
    reminders, days = size.catchup_reminders, size.catchup_days
    now_ms = time.time_ns() // 1_000_000
    owed_ms = (now_ms - round(days * _DAY_MS)) // _MINUTE_MS * _MINUTE_MS
    events = [("schedule/change", cron_record(n, owed_ms)) for n in range(1, reminders + 1)]
    write_session(data_dir, SESSION, events, created_at=owed_ms)
    os.sync()
    patience = 60 + reminders * 10.0
    with WebHost.start(data_dir, overlay=OVERLAY, token=TOKEN) as web:
        poller = _HealthPoller(web.base_url)
        poller.start()
        time.sleep(2.0)  # the idle host's health latency: the limit
        asked = time.perf_counter()
        web.post(f"/api/sessions/{SESSION}/resume").raise_for_status()
        dispatched_at: float | None = None
        ended_at: float | None = None
        missed: list[int] = []
        deadline = asked + patience
        while time.perf_counter() < deadline and ended_at is None:
            dispatched, ended, missed = _progress(web)
            now = time.perf_counter()
            if dispatched >= reminders and dispatched_at is None:
                dispatched_at = now
            if ended >= reminders:
                ended_at = now
            time.sleep(0.05)
        finished = time.perf_counter()
        poller.stop.set()
        poller.join()
    idle = poller.between(asked - 1.5, asked)
    during = poller.between(asked, dispatched_at or finished)
    return {
        "reminders": reminders,
        "days_down": days,
        "zone": ZONE,
        "missed_minutes_each": (now_ms - owed_ms) // _MINUTE_MS,
        "completed": ended_at is not None,
        "catchup_dispatched_s": None if dispatched_at is None else round(dispatched_at - asked, 2),
        "catchup_answered_s": None if ended_at is None else round(ended_at - asked, 2),
        "health_idle_ms": summary(idle, 2),
        "health_during_ms": summary(during, 2),
        "health_errors": poller.errors,
        "missed_stored": sorted(set(missed)),
    }
