from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from dsh.host.host import Host
from dsh.plugins.context import ClientModule
from dsh.web import WebSettings, create_app
from dsh.web.settings import STATIC_DIR
from dsh.web.static import module_url, resolve_below

from .conftest import TOKEN, UiPlugin

pytestmark = pytest.mark.anyio


async def test_the_root_serves_index_html_without_a_token(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.text.startswith("<!doctype html>")


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/static/app.js", "text/javascript; charset=utf-8"),
        ("/static/sub/deep.mjs", "text/javascript; charset=utf-8"),
        ("/static/style.css", "text/css; charset=utf-8"),
        ("/static/blob.bin", "application/octet-stream"),
    ],
)
async def test_static_files_are_served_with_a_fixed_content_type(
    anonymous: httpx.AsyncClient, path: str, content_type: str
) -> None:
    response = await anonymous.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"] == content_type


async def test_head_is_answered_without_a_body(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.head("/static/app.js")
    assert response.status_code == 200
    assert response.content == b""
    assert int(response.headers["content-length"]) > 0


@pytest.mark.parametrize(
    "path",
    [
        "/static/",
        "/static/sub",
        "/static/sub/",
        "/static/.hidden",
        "/static/%2e%2e/outside.txt",
        "/static/sub/%2e%2e/%2e%2e/outside.txt",
        "/static/escape.txt",
        "/static/missing.js",
        "/static/a%5Cb",
    ],
)
async def test_nothing_outside_the_folder_or_hidden_or_a_listing_is_served(
    anonymous: httpx.AsyncClient, path: str
) -> None:
    response = await anonymous.get(httpx.URL(path))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


async def test_a_missing_client_is_a_clear_404(
    anonymous: httpx.AsyncClient, static_dir: Path
) -> None:
    (static_dir / "index.html").unlink()
    response = await anonymous.get("/")
    assert response.status_code == 404
    assert "not installed" in response.json()["error"]["message"]


def test_resolve_below_refuses_backslashes_and_nul(static_dir: Path) -> None:
    assert resolve_below(static_dir, "app.js") == (static_dir / "app.js").resolve()
    assert resolve_below(static_dir, "sub\\deep.mjs") is None
    assert resolve_below(static_dir, "app\0.js") is None
    assert resolve_below(static_dir, "sub//deep.mjs") is None


async def test_a_declared_plugin_module_is_served_as_javascript(
    anonymous: httpx.AsyncClient, host: Host, tmp_path: Path
) -> None:
    module = tmp_path / "ui" / "render.js"
    module.parent.mkdir()
    module.write_text("export function register() {}\n", encoding="utf-8")
    (module.parent / "secret.js").write_text("nope", encoding="utf-8")
    host.pm.register(UiPlugin([ClientModule(module)]), name="ui-test")
    response = await anonymous.get("/plugins/ui-test/render.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.text.startswith("export function register")
    assert (await anonymous.get("/plugins/ui-test/secret.js")).status_code == 404
    assert (await anonymous.get("/plugins/other/render.js")).status_code == 404


async def test_the_files_a_module_declares_it_imports_are_served_next_to_it(
    anonymous: httpx.AsyncClient, host: Host, tmp_path: Path
) -> None:
    folder = tmp_path / "ui"
    folder.mkdir()
    module = folder / "entry.js"
    module.write_text('import { words } from "./words.js";\n', encoding="utf-8")
    (folder / "words.js").write_text("export const words = 1;\n", encoding="utf-8")
    (folder / "private.js").write_text("nope", encoding="utf-8")
    declared = ClientModule(module, imports=(folder / "words.js", folder / "gone.js"))
    host.pm.register(UiPlugin([declared]), name="ui-test")
    response = await anonymous.get("/plugins/ui-test/words.js")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.text == "export const words = 1;\n"
    assert (await anonymous.get("/plugins/ui-test/entry.js")).status_code == 200
    assert (await anonymous.get("/plugins/ui-test/private.js")).status_code == 404
    assert (await anonymous.get("/plugins/ui-test/gone.js")).status_code == 404
    assert (await anonymous.get("/plugins/other/words.js")).status_code == 404


async def test_an_unloaded_plugins_modules_disappear(
    anonymous: httpx.AsyncClient, host: Host, tmp_path: Path
) -> None:
    module = tmp_path / "render.js"
    module.write_text("export {};\n", encoding="utf-8")
    plugin = UiPlugin([ClientModule(module)])
    host.pm.register(plugin, name="ui-test")
    assert (await anonymous.get("/plugins/ui-test/render.js")).status_code == 200
    host.pm.unregister(plugin)
    assert (await anonymous.get("/plugins/ui-test/render.js")).status_code == 404


async def test_a_declared_module_missing_on_disk_is_404(
    anonymous: httpx.AsyncClient, host: Host, tmp_path: Path
) -> None:
    host.pm.register(UiPlugin([ClientModule(tmp_path / "gone.js")]), name="ui-test")
    assert (await anonymous.get("/plugins/ui-test/gone.js")).status_code == 404


def test_module_urls_are_namespaced_and_quoted() -> None:
    assert module_url("ui", "a.js") == "/plugins/ui/a.js"
    assert module_url("odd name", "a b.js") == "/plugins/odd%20name/a%20b.js"


@pytest.mark.parametrize(
    "path",
    ["vendor/markdown-it/markdown-it.mjs", "vendor/katex/katex.mjs", "markdown-katex.js"],
)
async def test_the_client_vendored_modules_are_served_as_javascript_under_the_pages_csp(
    host: Host, path: str
) -> None:
    """The real client folder: markdown-it and KaTeX load as same-origin module scripts."""
    settings = WebSettings(token=TOKEN, port=8765, static_dir=STATIC_DIR)
    transport = httpx.ASGITransport(app=create_app(host, settings), raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        response = await http.get(f"/static/{path}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/javascript; charset=utf-8"
    assert response.content == (STATIC_DIR / path).read_bytes()
    policy = response.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src" not in policy
    assert "unsafe-eval" not in policy
