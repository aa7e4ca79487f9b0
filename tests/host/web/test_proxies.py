"""Behind a TLS reverse proxy: X-Forwarded-* believed only from the proxies one names."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial

import anyio
import pytest
from pydantic import ValidationError

from dsh.host.host import Host
from dsh.web import WebServer, WebSettings, create_app
from tests.reliability.raw_http import RawResponse, raw_request, ws_handshake
from tests.support.deadlines import WAIT

from .conftest import TOKEN

pytestmark = pytest.mark.anyio

PUBLIC = "dsh.example.com"
FORWARDED = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"}


@asynccontextmanager
async def behind_a_proxy(
    host: Host, settings: WebSettings, trusted: tuple[str, ...]
) -> AsyncIterator[str]:
    """A real server answering to the public name, trusting `trusted`; yields its base URL."""
    live = settings.model_copy(
        update={"port": 0, "allowed_hosts": (PUBLIC,), "trusted_proxies": trusted}
    )
    server = WebServer(create_app(host, live), live)
    async with anyio.create_task_group() as group:
        group.start_soon(server.run_until_stopped)
        with anyio.fail_after(WAIT):
            await server.listening.wait()
        yield f"http://127.0.0.1:{server.port}"
        server.stop()


async def in_thread(call: Callable[[], RawResponse]) -> RawResponse:
    return await anyio.to_thread.run_sync(call)


async def what_a_proxied_page_gets(base: str, session_id: str) -> tuple[int, str]:
    """The live stream's handshake status and the page's CSP, asked as a proxy forwards an
    `https://dsh.example.com` page."""
    headers = {**FORWARDED, "Origin": f"https://{PUBLIC}"}
    path = f"/api/sessions/{session_id}/live?token={TOKEN}"
    handshake = await in_thread(partial(ws_handshake, base, path, headers, host=PUBLIC))
    page = await in_thread(partial(raw_request, base, "GET", "/", FORWARDED, host=PUBLIC))
    return handshake.status, page.headers["content-security-policy"]


async def test_a_named_proxy_is_believed_so_an_https_page_may_open_its_stream(
    host: Host, settings: WebSettings
) -> None:
    session_id = (await host.create_session()).session.id
    async with behind_a_proxy(host, settings, ("127.0.0.1",)) as base:
        status, policy = await what_a_proxied_page_gets(base, session_id)
        health = await in_thread(
            partial(
                raw_request,
                base,
                "GET",
                "/api/health",
                {**FORWARDED, "Authorization": f"Bearer {TOKEN}"},
                host=PUBLIC,
            )
        )
    assert status == 101
    assert f"connect-src 'self' wss://{PUBLIC}" in policy
    assert json.loads(health.body)["ok"] is True


@pytest.mark.parametrize("trusted", [(), ("10.0.0.0/8",)])
async def test_forwarded_headers_from_anyone_else_change_nothing(
    host: Host, settings: WebSettings, trusted: tuple[str, ...]
) -> None:
    session_id = (await host.create_session()).session.id
    async with behind_a_proxy(host, settings, trusted) as base:
        status, policy = await what_a_proxied_page_gets(base, session_id)
    assert status == 403  # the https Origin is not this plain-http server's
    assert f"connect-src 'self' ws://{PUBLIC}" in policy


@pytest.mark.parametrize("proxy", ["*", "proxy.internal", "10.0.0.0/33", ""])
def test_a_proxy_must_be_an_address_or_a_network(proxy: str) -> None:
    with pytest.raises(ValidationError, match="is not an IP address or network; name each"):
        WebSettings(token=TOKEN, trusted_proxies=(proxy,))
    assert WebSettings(token=TOKEN, trusted_proxies=("::1", "10.0.0.0/8")).trusted_proxies
