"""`plugin_host()`: one plugin in a test Host, with a web client and strict mode.

    async with plugin_host("tool-clock", model=FakeModel([...])) as test:
        agent = await test.host.create_session()
        agent.submit("what time is it?", time_zone="Europe/Paris")
        await settled(agent)
        async with test.client() as client:
            response = await client.get(f"/api/sessions/{agent.session.id}")
        async with test.websocket(f"/api/sessions/{agent.session.id}/live") as live:
            first = await live.receive_json()

`plugin` is the entry-point name of an installed plugin (what an overlay
names; a plugin under development is installed with `pip install -e .`) or
a plugin class, which is loaded under its entry-point name when an
installed entry point names that class, else under the class name.

Strict mode is on unless `strict=False`: a tool or a hook that raises is
contained by the Host as in production, and then fails the test when the
block ends, with every traceback (`StrictModeError`); `test.check()` fails
it earlier.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.types import ASGIApp

from ..base.clock import Clock
from ..host.host import Host
from ..models.base import ModelAdapter
from .host import Unload, load_plugin, running_host
from .strict import Strict
from .web import WebSocketSession, web_app, web_client

__all__ = ["PluginTest", "plugin_host"]


@dataclass(slots=True)
class PluginTest:
    """The running test Host, the plugin in it and the ways to reach it."""

    host: Host
    plugin: Any
    name: str
    unload: Unload
    strict: Strict | None
    _app: ASGIApp | None = None

    @property
    def app(self) -> ASGIApp:
        """The web app `dsh web` would serve for this Host (built once)."""
        if self._app is None:
            self._app = web_app(self.host)
        return self._app

    def client(self) -> AbstractAsyncContextManager[httpx.AsyncClient]:
        """`async with test.client() as client:` an `httpx.AsyncClient` on the app."""
        return web_client(self.app)

    def websocket(
        self, path: str, *, token: str | None = None
    ) -> AbstractAsyncContextManager[WebSocketSession]:
        """`async with test.websocket(path) as ws:` a WebSocket on the app (`WebSocketSession`)."""
        if token is None:
            return WebSocketSession.connect(self.app, path)
        return WebSocketSession.connect(self.app, path, token=token)

    def check(self) -> None:
        """Fail now (`StrictModeError`) if a tool or hook raised so far (strict mode only)."""
        if self.strict is not None:
            self.strict.check()


@asynccontextmanager
async def plugin_host(
    plugin: type[Any] | str,
    *,
    config: Mapping[str, Any] | None = None,
    model: ModelAdapter | None = None,
    clock: Clock | None = None,
    strict: bool = True,
) -> AsyncIterator[PluginTest]:
    """A running test Host with `plugin` loaded (see the module docstring)."""
    watcher = Strict() if strict else None
    with nullcontext() if watcher is None else watcher.watching():
        async with running_host(model=model, clock=clock) as host:
            instance, unload = await load_plugin(host, plugin, config=config)
            name = next(key for key, it in host.loader.loaded.items() if it.instance is instance)
            yield PluginTest(host, instance, name, unload, watcher)
    if watcher is not None:
        watcher.check()
