"""The web host: the HTTP API, the live WebSocket stream, the static browser client.

Modules, one idea each:

- `app`: the app factories (`create_app` for a running Host, `build_web_app`
  for `dsh web`, whose lifespan runs the Host);
- `api`: the public HTTP routes under `/api`; `stream`: the live WebSocket;
- `live`: the fan-out of store observations and the commit-aware sidecars;
- `history`: history pages with the views storage can vouch for;
- `static`: the browser client's files and plugin modules;
- `guards`: Host allowlist, token, Origin, security headers;
  `limits`: the request body limit; `errors`: the one error shape;
- `state`: what the routes share; `settings`: `WebSettings`;
- `server`: uvicorn, programmatically; `connections`: the accept loop, the
  connection caps and read deadlines it runs with; `redact`: the token
  kept out of every log line; `launch`: from an overlay, data dir and
  model to a running server (what `dsh web` calls); `running`: what the
  data dir remembers of it (`web.json`, `overlay.path`).
"""

from __future__ import annotations

from .app import build_web_app, create_app
from .errors import LaunchError, WebStartupError
from .launch import run_web
from .server import WebServer, serve
from .settings import WebSettings

__all__ = [
    "LaunchError",
    "WebServer",
    "WebSettings",
    "WebStartupError",
    "build_web_app",
    "create_app",
    "run_web",
    "serve",
]
