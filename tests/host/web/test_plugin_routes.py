"""Plugins' HTTP routes (`dsh_web_routes`) and health (`dsh_health`), served by the web app."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from dsh.host.host import Host
from dsh.plugins.hookspecs import hookimpl

pytestmark = pytest.mark.anyio


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"hello {request.path_params.get('name', 'world')}")


async def _shadow(request: Request) -> JSONResponse:
    return JSONResponse({"shadowed": True})


class RoutePlugin:
    """Serves `/api/greet/{name}` (token) and `/greet.js` (none); tries to shadow a host route."""

    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def dsh_web_routes(self) -> list[Any]:
        self.asked += 1
        return [
            Route("/api/greet/{name}", _hello, methods=["GET"]),
            Route("/greet.js", _hello, methods=["GET"]),
            Route("/api/health", _shadow, methods=["GET"]),
            "not a route",
        ]


class HealthPlugin:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    @hookimpl
    def dsh_health(self) -> Any:
        return self.answer


async def test_a_plugin_route_under_api_needs_the_token_and_one_elsewhere_does_not(
    client: httpx.AsyncClient, anonymous: httpx.AsyncClient, host: Host
) -> None:
    host.pm.register(RoutePlugin(), name="greeter")
    assert (await client.get("/api/greet/ada")).text == "hello ada"
    refused = await anonymous.get("/api/greet/ada")
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "unauthorized"
    public = await anonymous.get("/greet.js")
    assert public.status_code == 200 and public.text == "hello world"
    # Behind the same guard: the security headers are there, and /api answers are not cached.
    assert "content-security-policy" in public.headers
    assert (await client.get("/api/greet/ada")).headers["cache-control"] == "no-store"


async def test_host_routes_win_a_wrong_method_is_405_and_an_unknown_path_404(
    client: httpx.AsyncClient, host: Host
) -> None:
    host.pm.register(RoutePlugin(), name="greeter")
    assert (await client.get("/api/health")).json()["ok"] is True
    wrong = await client.post("/api/greet/ada")
    assert wrong.status_code == 405
    assert (await client.get("/api/greet")).status_code == 404


async def test_routes_are_asked_once_per_set_of_plugins_and_bad_items_are_logged(
    client: httpx.AsyncClient, host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    plugin = RoutePlugin()
    with caplog.at_level(logging.ERROR, logger="dsh.plugins.contributions"):
        host.pm.register(plugin, name="greeter")
        for _ in range(3):
            assert (await client.get("/api/greet/x")).status_code == 200
    assert plugin.asked == 1
    assert "plugin 'greeter' returned 'not a route' from dsh_web_routes" in caplog.text
    host.pm.unregister(name="greeter")
    assert (await client.get("/api/greet/x")).status_code == 404


async def test_plugins_add_keys_to_health_but_never_the_hosts_or_each_others(
    client: httpx.AsyncClient, host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    host.pm.register(HealthPlugin({"notify": {"pending": 2}, "ok": False}), name="first")
    host.pm.register(HealthPlugin({"notify": {"pending": 9}}), name="second")
    host.pm.register(HealthPlugin(["not", "a", "mapping"]), name="third")
    with caplog.at_level(logging.ERROR):
        answer = await client.get("/api/health")
    assert answer.status_code == 200
    body = answer.json()
    assert body["ok"] is True and set(body) == {"ok", "version", "notify"}
    # pluggy calls the plugin registered last first.
    assert body["notify"] == {"pending": 9}
    assert "key 'notify', which is already taken" in caplog.text
    assert "key 'ok', which is already taken" in caplog.text
    assert "returned a bad result from dsh_health" in caplog.text
