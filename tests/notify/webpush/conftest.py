"""`Harness`: one `WebPush` over a context of its own, its routes on an in-process client.

The context carries what `WebPush` reads — `config`, `storage`, `alerts`,
`actions` — with a recording `alerts`/`actions` pair (the host's own are
tested with the host; here what matters is which alert a capability reaches).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from dsh_notify.config import NotifyConfig
from dsh_notify.webpush import WebPush
from pydantic import JsonValue
from starlette.applications import Starlette

from dsh import StorageLocation


@dataclass
class Recorder:
    """Stands in for `PluginContext.alerts` and `.actions`, recording each call."""

    reads: list[tuple[str, int]] = field(default_factory=list)
    runs: list[tuple[str, str, str, dict[str, JsonValue]]] = field(default_factory=list)
    fail: Exception | None = None

    def subscribe(self, sink: Any, *, scope: Any) -> None:
        return None

    async def read(self, session_id: str, through_seq: int) -> int:
        if self.fail is not None:
            raise self.fail
        self.reads.append((session_id, through_seq))
        return 0

    async def run(
        self, session_id: str, plugin: str, action: str, args: dict[str, JsonValue]
    ) -> JsonValue:
        if self.fail is not None:
            raise self.fail
        self.runs.append((session_id, plugin, action, args))
        return {"snooze": {"id": "r2"}}


@dataclass
class Harness:
    push: WebPush
    client: httpx.AsyncClient
    recorder: Recorder


def context(storage: StorageLocation, recorder: Recorder, **config: Any) -> Any:
    settings = NotifyConfig(web_push=True, **config)
    return SimpleNamespace(config=settings, storage=storage, alerts=recorder, actions=recorder)


@asynccontextmanager
async def harness(storage: StorageLocation | None = None, **config: Any) -> AsyncIterator[Harness]:
    recorder = Recorder()
    push = WebPush(context(storage or StorageLocation(), recorder, **config))
    await push.open()
    app = Starlette(routes=push.routes())
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield Harness(push, client, recorder)
    finally:
        await push.aclose()


@pytest.fixture
def jsonl(tmp_path: Path) -> StorageLocation:
    return StorageLocation("jsonl", data_dir=tmp_path)


Factory = Callable[..., Any]
