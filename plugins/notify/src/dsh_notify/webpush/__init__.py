"""`WebPush`: Web Push for one host — keys, subscriptions, channel, routes, the page's module.

The seam with the rest of dsh-notify (`NotifyPlugin` builds one when
`web_push = true`):

- `WebPush(context)`: cheap, no I/O; the routes exist at once and answer
  503 `not_ready` until `open()` has finished;
- `await open()`: loads (or makes) the VAPID key pair and opens the
  subscription store where the Host keeps its Sessions (`keys.py`,
  `subscriptions.py`, `postgres.py`); raises `VapidKeyError`,
  `SubscriptionStoreError` or `dsh.StorageError` with a message naming the
  file or database — a start-up error, never a silent new key;
- `channel`: the `Channel` "webpush" (`sender.py`), valid after `open()`;
- `routes()`: `routes.py`; `client_modules()`: the page's module
  (`static/notify-push.js`), which registers `/sw.js` and subscribes after
  the person's "Notify me";
- `await aclose()`: closes the HTTP client; idempotent.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import httpx
from starlette.routing import BaseRoute

from dsh import ClientModule, PluginContext

from ..channel import Channel
from ..config import NotifyConfig
from .keys import VapidKeyError, VapidKeys, load_key_file
from .routes import Opened, push_routes
from .sender import WebPushChannel
from .subscriptions import SUBSCRIPTIONS_FILE, FileSubscriptions, SubscriptionStoreError

__all__ = ["CLIENT_MODULE", "SubscriptionStoreError", "VapidKeyError", "WebPush"]

STATIC = Path(__file__).parent.parent / "static"
CLIENT_MODULE = STATIC / "notify-push.js"
CLIENT_IMPORTS = (STATIC / "notify-words.js",)
SEND_TIMEOUT = 10.0


class WebPush:
    """Web Push for one host (see the module docstring)."""

    def __init__(self, context: PluginContext[NotifyConfig]) -> None:
        self._context = context
        self._opened: Opened | None = None
        self._channel: WebPushChannel | None = None
        self._client: httpx.AsyncClient | None = None
        self._routes = push_routes(context, lambda: self._opened, time.time)

    async def open(self) -> None:
        """Load or make the keys and open the store (see the module docstring)."""
        storage = self._context.storage
        if storage.kind == "postgresql":
            from .postgres import PostgresRecords  # psycopg: the `postgresql` extra

            records = PostgresRecords(storage)
            await records.create()
            keys = await records.keys()
            opened = Opened(keys, records)
        else:
            directory = storage.data_dir if storage.kind == "jsonl" else None
            if directory is None:
                keys = VapidKeys.new()
            else:  # file reads and an fsync'd write: off the event loop
                keys = await anyio.to_thread.run_sync(load_key_file, directory)
            store = FileSubscriptions(None if directory is None else directory / SUBSCRIPTIONS_FILE)
            await anyio.to_thread.run_sync(store.load)
            opened = Opened(keys, store)
        self._client = httpx.AsyncClient(timeout=SEND_TIMEOUT, follow_redirects=False)
        self._channel = WebPushChannel(opened.store, opened.keys, self._client)
        self._opened = opened

    @property
    def channel(self) -> Channel:
        """The "webpush" channel; `RuntimeError` before `open()`."""
        if self._channel is None:
            raise RuntimeError("WebPush.channel is there once open() has finished")
        return self._channel

    def routes(self) -> list[BaseRoute]:
        """The HTTP routes (`routes.py`)."""
        return list(self._routes)

    def client_modules(self) -> list[ClientModule]:
        """The page's module: registers `/sw.js`, subscribes after "Notify me", shows failures."""
        return [ClientModule(path=CLIENT_MODULE, imports=CLIENT_IMPORTS)]

    async def aclose(self) -> None:
        """Close the HTTP client (idempotent); the routes answer 503 afterwards."""
        self._opened = None
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
