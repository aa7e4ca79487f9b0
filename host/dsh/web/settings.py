"""Settings of one web host: where it listens, who may talk to it, and its limits.

`WebSettings` is a strict, frozen pydantic record. The access token is
required; `dsh.web.token_file.choose_token()` decides once, at start-up, where
it comes from (`$DSH_TOKEN`, the data dir's token file, or a new one).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..base.limits import MAX_TEXT_BYTES
from .logs import LogFormat

__all__ = [
    "AUTH_FAILURES",
    "AUTH_WINDOW",
    "BODY_TIMEOUT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "HEADER_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_UNAUTHENTICATED",
    "MESSAGE_BODY_BYTES",
    "STATIC_DIR",
    "WebSettings",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MIB = 1024 * 1024
STATIC_DIR = Path(__file__).parent / "static"
HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 30.0
MAX_CONNECTIONS = 1024
MAX_UNAUTHENTICATED = 128
# A message's text of the whole limit, each byte escaped into six (`\u0001`), and 64 KiB more.
MESSAGE_BODY_BYTES = 6 * MAX_TEXT_BYTES + 64 * 1024
AUTH_FAILURES = 20
AUTH_WINDOW = 60.0


class WebSettings(BaseModel):
    """How the web host listens and what it accepts.

    - `token`: the access token every `/api` request and WebSocket must carry.
    - `host`, `port`: the bind address; port 0 picks a free port.
    - `allowed_hosts`: extra `Host` header values (`name` or `name:port`)
      accepted besides the bind host, `127.0.0.1`, `localhost` and `[::1]`
      on the real port (a defence against DNS rebinding).
    - `trusted_proxies`: addresses or networks (`127.0.0.1`, `10.0.0.0/8`) of
      reverse proxies whose `X-Forwarded-Proto` and `X-Forwarded-For` are
      believed: a request that comes from one is judged by the scheme and
      client it forwards (an `https://` page's Origin then matches). None by
      default: anyone could send those headers. `*` is refused.
    - `max_body_bytes`: the largest request body (and WebSocket message).
    - `max_message_body_bytes`: the largest body of a posted message; by
      default room for a text of the whole text limit however its JSON is
      escaped (`dsh.web.limits`).
    - `queue_frames`: how many frames one WebSocket may have waiting; a
      client that falls further behind is disconnected (close code 1013).
    - `close_timeout`: how long closing one WebSocket may take, in seconds.
    - `static_dir`: the browser client's folder.

    Connection limits (`dsh.web.connections` explains the choices):

    - `header_timeout`: seconds a connection may take to send a request line
      and its headers (counted from the connection's start, or from the end
      of the previous response on a kept-alive connection).
    - `body_timeout`: seconds a request may take to send its body once its
      headers are in.
    - `max_connections`: connections held at once, WebSockets included; the
      server never holds more than half of its file-descriptor limit.
    - `max_unauthenticated`: connections held at once that have not yet
      presented the access token (at most half of the connection cap).
    - `access_log`: write one log line per HTTP request (off by default).
    - `log_format`: `text` (the default) or `json`, one object per line
      (`dsh.web.logs`).
    - `auth_failures`, `auth_window`: after this many failed authentications
      from one address within this many seconds, its token requests are
      answered 429 until the window ends (`dsh.web.throttle`).
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    token: Annotated[str, Field(min_length=1)]
    host: str = DEFAULT_HOST
    port: Annotated[int, Field(ge=0, le=65535)] = DEFAULT_PORT
    allowed_hosts: tuple[str, ...] = ()
    trusted_proxies: tuple[str, ...] = ()
    max_body_bytes: Annotated[int, Field(gt=0)] = MIB
    max_message_body_bytes: Annotated[int, Field(gt=0)] = MESSAGE_BODY_BYTES
    queue_frames: Annotated[int, Field(gt=0)] = 1024
    close_timeout: Annotated[float, Field(gt=0)] = 5.0
    static_dir: Path = STATIC_DIR
    header_timeout: Annotated[float, Field(gt=0)] = HEADER_TIMEOUT
    body_timeout: Annotated[float, Field(gt=0)] = BODY_TIMEOUT
    max_connections: Annotated[int, Field(ge=2)] = MAX_CONNECTIONS
    max_unauthenticated: Annotated[int, Field(ge=1)] = MAX_UNAUTHENTICATED
    access_log: bool = False
    log_format: LogFormat = "text"
    auth_failures: Annotated[int, Field(ge=1)] = AUTH_FAILURES
    auth_window: Annotated[float, Field(gt=0)] = AUTH_WINDOW

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, proxies: tuple[str, ...]) -> tuple[str, ...]:
        for proxy in proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(
                    f"trusted proxy {proxy!r} is not an IP address or network; name each "
                    "proxy (e.g. 127.0.0.1 or 10.0.0.0/8): trusting every address would let "
                    "anyone choose the scheme and client address a request claims"
                ) from None
        return proxies
