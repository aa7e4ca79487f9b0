"""Notifications (`dsh-notify`): from an alert to the request a channel receives, and what the
outbox costs.

A real `Host` on the JSONL backend in the data dir with the notify plugin
(its outbox is `notify-outbox.jsonl` beside the logs) sending to one Apprise
`json://` URL: a webhook in this process that notes when each request
arrived. A plugin marks one event type an alert; `notify_alerts` of them
(full: 1,000) are flushed at targets spread evenly over `notify_window`
seconds (full: 10 s) across 50 live Sessions, like reminders falling due.

- **alert → received**: from the flush's return (the alert exists: its event
  is durable) to the webhook's receipt of its POST — the Host hands the
  alert over, the outbox records it (one line, one fsync), the sender
  claims it, Apprise posts it from a worker thread.
- **outbox per alert**: the time the alert sink spent in the outbox's `add`
  (what the Host's attention worker waits for; almost all of it the fsync).
- **the same with one channel failing**: a second channel (what a Web Push
  service that stopped answering is) whose every send hangs 5 s and then
  asks to be retried; the healthy channel's figures beside the first run's.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from dsh_notify.channel import Message, Outcome, Retry
from dsh_notify.plugin import NotifyPlugin

from dsh import SessionEvent, SessionLog, hookimpl
from dsh.host.host import Host
from dsh.persistence.jsonl import JsonlBackend
from dsh.testing import load_plugin

from ..sizes import Size
from ..stats import summary
from ..support import FastModel

__all__ = ["notify"]

RING = "bench/ring"
SESSIONS = 50


class _Ringer:
    @hookimpl
    def dsh_session_alert(self, session: SessionLog, event: SessionEvent) -> Any:
        if event.type != RING:
            return None
        data = event.data
        assert isinstance(data, dict)
        return {"title": f"alert {data['n']}", "body": "due now", "tag": f"t{data['n']}"}


class _Hanging:
    """A channel that stopped answering: every send waits 5 s, then asks for a retry."""

    name = "webpush"

    async def targets(self) -> list[str]:
        return ["phone"]

    async def send(self, target: str, message: Message) -> Outcome:
        await anyio.sleep(5)
        return Retry("no answer")


class _Webhook:
    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.done = threading.Event()
        self.expected = 0
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                hook.arrived.setdefault(json.loads(body)["title"], time.perf_counter())
                if len(hook.arrived) >= hook.expected:
                    hook.done.set()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


async def _run(size: Size, data_dir: Path, *, failing: bool) -> dict[str, Any]:
    hook = _Webhook()
    hook.expected = size.notify_alerts
    flushed: dict[str, float] = {}
    recorded_ms: list[float] = []
    try:
        async with Host(backend=JsonlBackend(data_dir / "logs"), model=FastModel()) as host:
            host.pm.register(_Ringer(), name="ringer")
            plugin, _ = await load_plugin(
                host, NotifyPlugin, name="notify", config={"urls": [hook.url]}
            )
            if failing:
                plugin.sender.add(_Hanging())
            recorder, outbox = plugin.recorder, plugin.outbox
            add = outbox.add

            async def timed(deliveries: Any) -> int:
                begun = time.perf_counter()
                added = await add(deliveries)
                recorded_ms.append((time.perf_counter() - begun) * 1000)
                return added

            outbox.add = timed  # type: ignore[method-assign]
            agents = [await host.create_session() for _ in range(SESSIONS)]
            with anyio.fail_after(30):
                await recorder.ready.wait()
            await host.attention.settled()
            start = time.perf_counter()
            step = size.notify_window / size.notify_alerts
            for n in range(size.notify_alerts):
                await anyio.sleep(max(start + n * step - time.perf_counter(), 0))
                session = agents[n % SESSIONS].session
                host.live.append(session, RING, {"n": n})
                assert await host.live.flush(session)
                flushed[f"alert {n}"] = time.perf_counter()
            if not await anyio.to_thread.run_sync(hook.done.wait, 60.0):
                raise TimeoutError(f"{len(hook.arrived)} of {size.notify_alerts} arrived in 60 s")
            counts = plugin.outbox.counts
    finally:
        hook.close()
    latency = [(hook.arrived[title] - at) * 1000 for title, at in flushed.items()]
    return {
        "alerts": size.notify_alerts,
        "window_s": size.notify_window,
        "alert_to_received_ms": summary(latency),
        "outbox_record_ms": summary(recorded_ms),
        "pending_after": counts.pending,
    }


async def notify(size: Size, data_dir: Path) -> dict[str, Any]:
    """Both runs (module docstring)."""
    return {
        "healthy": await _run(size, data_dir / "healthy", failing=False),
        "one_failing": await _run(size, data_dir / "failing", failing=True),
    }
