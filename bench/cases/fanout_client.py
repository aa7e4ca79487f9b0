"""WebSocket subscribers for the fan-out case, in their own process.

    python -m bench.cases.fanout_client URL COUNT EVENTS

Opens COUNT connections to the live-stream URL (token in the query), prints
`ready` once every one has its hello frame, then records, for each `event`
frame of type `bench/ping`, `time.monotonic_ns()` at receipt minus the
`data.t` the server stamped just before the append (CLOCK_MONOTONIC is one
clock for every process on the machine). After EVENTS pings per connection
it prints one JSON line `{"latency_ms": [[per ping, per connection], ...]}`.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from websockets.asyncio.client import connect


async def _subscriber(
    url: str, events: int, ready: asyncio.Event, row: list[float], opened: list[int], total: int
) -> None:
    async with connect(url, max_size=None, compression=None) as websocket:
        hello = json.loads(await websocket.recv())
        assert hello["kind"] == "hello", hello
        opened.append(1)
        if len(opened) == total:
            ready.set()
        while len(row) < events:
            frame = json.loads(await websocket.recv())
            now = time.monotonic_ns()
            event = frame.get("event")
            ping = frame.get("kind") == "event" and event and event["type"] == "bench/ping"
            if ping and "sidecar" not in frame:
                row.append((now - event["data"]["t"]) / 1e6)


async def main(url: str, count: int, events: int) -> None:
    ready = asyncio.Event()
    opened: list[int] = []
    rows: list[list[float]] = [[] for _ in range(count)]
    tasks = [
        asyncio.create_task(_subscriber(url, events, ready, rows[index], opened, count))
        for index in range(count)
    ]
    await asyncio.wait_for(ready.wait(), 60)
    print("ready", flush=True)
    await asyncio.wait_for(asyncio.gather(*tasks), 120)
    print(json.dumps({"latency_ms": rows}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
