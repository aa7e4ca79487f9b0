"""The browser client's files and the modules UI plugins ship.

- `GET /` serves `static/index.html`;
- `GET /static/<path>` serves a file below the static folder: read-only, no
  directory listing, no hidden files, nothing outside the folder;
- `GET /plugins/<plugin>/<file>` serves a module a *loaded* plugin declared
  through `dsh_client_modules`, or one of the files that module declared it
  imports (`ClientModule.imports`), namespaced by plugin like datasette's
  plugin static folders; any other name is 404, so a plugin cannot expose
  files it did not declare and an unloaded plugin's modules disappear with it.

Content types come from a fixed table (never the platform's mimetypes
database), so an ES module is always served as JavaScript. These files need no
token (see `guards`); they still pass the Host allowlist.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse

from .errors import ApiError
from .state import web_state

__all__ = ["CONTENT_TYPES", "module_url", "resolve_below", "router"]

JAVASCRIPT = "text/javascript; charset=utf-8"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": JAVASCRIPT,
    ".mjs": JAVASCRIPT,
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
}
FALLBACK_TYPE = "application/octet-stream"
# Revalidate on every load: the client is small and must not go stale after an upgrade.
CACHE = {"Cache-Control": "no-cache"}

router = APIRouter()


def module_url(plugin: str, filename: str) -> str:
    """Where a plugin's module file is served."""
    return f"/plugins/{quote(plugin, safe='')}/{quote(filename, safe='')}"


def resolve_below(root: Path, relative: str) -> Path | None:
    """The regular file `relative` names inside `root`, or None.

    Refuses empty, `.` and `..` segments, hidden names and backslashes before
    touching the file system, then checks the resolved path (symlinks
    followed) is still inside `root`.
    """
    parts = relative.split("/")
    if any(not part or part.startswith(".") or "\\" in part or "\0" in part for part in parts):
        return None
    base = root.resolve()
    candidate = base.joinpath(*parts).resolve()
    if not candidate.is_relative_to(base) or not candidate.is_file():
        return None
    return candidate


def _file(path: Path, media_type: str | None = None) -> FileResponse:
    kind = media_type or CONTENT_TYPES.get(path.suffix.lower(), FALLBACK_TYPE)
    return FileResponse(path, media_type=kind, headers=CACHE)


def _not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"no file {what}")


@router.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
async def index(request: Request) -> FileResponse:
    path = resolve_below(web_state(request.app).settings.static_dir, "index.html")
    if path is None:
        raise _not_found("index.html (the browser client is not installed)")
    return _file(path)


@router.api_route("/static/{relative:path}", methods=["GET", "HEAD"], include_in_schema=False)
async def static_file(request: Request, relative: str) -> FileResponse:
    path = resolve_below(web_state(request.app).settings.static_dir, relative)
    if path is None:
        raise _not_found(f"/static/{relative}")
    return _file(path)


@router.api_route("/plugins/{plugin}/{filename}", methods=["GET", "HEAD"], include_in_schema=False)
async def plugin_module(request: Request, plugin: str, filename: str) -> FileResponse:
    for published in web_state(request.app).host.contributions.client_modules():
        if published.plugin != plugin:
            continue
        for path in (published.module.path, *published.module.imports):
            if path.name == filename and path.is_file():
                return _file(path, JAVASCRIPT)
    raise _not_found(f"/plugins/{plugin}/{filename}")
