"""Fan-out: from `store.append` to the WebSocket frame in each subscriber.

The server is the real web app (`dsh.web.create_app`) served by the real
`WebServer` (uvicorn) in this process, around an in-process Host on the JSONL
backend. The subscribers run in a separate process
(`bench.cases.fanout_client`), so the two sides do not share an event loop or
a GIL. Each ping is a `bench/ping` event appended to one live Session with
`data.t = time.monotonic_ns()` taken just before the append; the client
subtracts it from its own receipt time. Pings are spaced 10 ms apart, so each
measures one broadcast, not a queue.

Reported per subscriber count: every delivery, and the last subscriber per
ping (when the slowest one had it). The limit is the same clients fed by a
bare `websockets` server in this process that sends the same frames with
`websockets.asyncio.server.broadcast` (no Host, no app, no per-Session
queues), measured in the same run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from tests.support.webhost import REPO

from dsh.web import create_app
from dsh.web.server import WebServer
from dsh.web.settings import WebSettings

from ..sizes import Size
from ..stats import summary
from ..support import bench_host

__all__ = ["fanout"]

TOKEN = "bench-token-0123456789abcdef"
GAP = 0.01


async def _clients(
    url: str, subscribers: int, pings: int, ping: Callable[[int], None]
) -> list[list[float]]:
    """Start the client process, call `ping(n)` every GAP once it is ready; its rows."""
    command = [sys.executable, "-m", "bench.cases.fanout_client", url, str(subscribers), str(pings)]
    process = await anyio.open_process(command, cwd=REPO, stdout=subprocess.PIPE)
    try:
        assert process.stdout is not None
        lines = _lines(process.stdout)
        with anyio.fail_after(60):
            first = await anext(lines)
        if first != "ready":
            raise RuntimeError(f"fan-out client said {first!r}")
        for index in range(pings):
            ping(index)
            await anyio.sleep(GAP)
        with anyio.fail_after(120):
            report = json.loads(await anext(lines))
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    rows: list[list[float]] = report["latency_ms"]
    return rows


def _figures(rows: list[list[float]], pings: int) -> tuple[dict[str, Any], dict[str, Any]]:
    every = [latency for row in rows for latency in row]
    last = [max(row[index] for row in rows) for index in range(pings)]
    return summary(every), summary(last)


async def _dsh_round(port: int, host: Any, subscribers: int, pings: int) -> dict[str, Any]:
    agent = await host.create_session()
    session = agent.session
    url = f"ws://127.0.0.1:{port}/api/sessions/{session.id}/live?token={TOKEN}"

    def ping(index: int) -> None:
        host.live.append(session, "bench/ping", {"t": time.monotonic_ns(), "n": index})

    rows = await _clients(url, subscribers, pings, ping)
    await host.close_session(session.id)
    every, last = _figures(rows, pings)
    return {"deliveries_ms": every, "last_subscriber_ms": last}


async def _raw_round(subscribers: int, pings: int) -> dict[str, Any]:
    """The limit: a bare websockets server broadcasting the same frames."""
    from websockets.asyncio.server import ServerConnection, broadcast, serve

    connections: set[ServerConnection] = set()

    async def handler(connection: ServerConnection) -> None:
        await connection.send(json.dumps({"kind": "hello", "tail": 0}))
        connections.add(connection)
        try:
            await connection.wait_closed()
        finally:
            connections.discard(connection)

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]

        def ping(index: int) -> None:
            event = {
                "seq": index,
                "type": "bench/ping",
                "time": time.time_ns() // 1_000_000,
                "data": {"t": time.monotonic_ns(), "n": index},
            }
            broadcast(
                connections, json.dumps({"kind": "event", "event": event}, separators=(",", ":"))
            )

        rows = await _clients(f"ws://127.0.0.1:{port}/", subscribers, pings, ping)
    return dict(
        zip(
            ("raw_broadcast_deliveries_ms", "raw_broadcast_last_ms"),
            _figures(rows, pings),
            strict=True,
        )
    )


async def _lines(stream: anyio.abc.ByteReceiveStream) -> Any:
    buffer = b""
    async for chunk in stream:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line.decode().strip()


async def fanout(size: Size, data_dir: Path) -> dict[str, Any]:
    settings = WebSettings(token=TOKEN, port=0)
    result: dict[str, Any] = {"pings": size.fanout_appends, "gap_ms": GAP * 1000}
    async with bench_host(data_dir, plugins=()) as host:
        app = create_app(host, settings)
        server = WebServer(app, settings)
        async with anyio.create_task_group() as group:
            group.start_soon(server.run_until_stopped)
            with anyio.fail_after(20):
                await server.listening.wait()
            for subscribers in size.fanout_subscribers:
                figures = await _dsh_round(server.port, host, subscribers, size.fanout_appends)
                figures.update(await _raw_round(subscribers, size.fanout_appends))
                result[f"subscribers_{subscribers}"] = figures
            server.stop()
    return result
