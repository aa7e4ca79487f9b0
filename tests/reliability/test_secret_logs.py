"""No access token or API key ever reaches a log, a stored Session or a model server it
does not belong to.

`dsh web --model openai` runs with `DSH_TOKEN`, `DSH_API_KEY`,
`OPENAI_API_KEY` and `DEEPSEEK_API_KEY` set, against a local fake
OpenAI-compatible server that is as careless as a real one can be: it echoes
the Authorization header it received back in its error messages (401, then
400). The test exercises the paths that log: WebSocket connects with the
token in the query string (uvicorn logs WebSocket paths), with wrong tokens
and with the token in another parameter, 401s and 404s whose URLs carry the
token, an oversized body, model failures, and a graceful shutdown. Then:

- the token appears in the output only inside the start-up URL line;
- no API key appears in the output, in any stored Session log, or in any
  history page;
- the provider keys that do not belong to the configured server were never
  sent to it.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from tests.support.webhost import WebHost, wait_for

from .figures import Figures
from .raw_http import raw_request, ws_handshake

pytestmark = [pytest.mark.reliability]


class EchoingModelServer(ThreadingHTTPServer):
    """A chat-completions endpoint that leaks what it was sent into its error messages."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EchoHandler)
        self.authorizations: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _EchoHandler(BaseHTTPRequestHandler):
    server: EchoingModelServer

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        authorization = self.headers.get("authorization", "")
        self.server.authorizations.append(authorization)
        status = 401 if len(self.server.authorizations) % 2 else 400
        message = f"Incorrect API key provided: {authorization}; headers: {dict(self.headers)}"
        body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        return None  # the test server stays quiet


@pytest.fixture
def model_server() -> Iterator[EchoingModelServer]:
    server = EchoingModelServer()
    server.thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def test_tokens_and_api_keys_never_reach_logs_storage_or_the_wrong_server(
    tmp_path: Path, model_server: EchoingModelServer, figures: Figures
) -> None:
    token = f"tok-{secrets.token_hex(12)}"
    keys = {
        "DSH_API_KEY": f"sk-dsh-{secrets.token_hex(12)}",
        "OPENAI_API_KEY": f"sk-openai-{secrets.token_hex(12)}",
        "DEEPSEEK_API_KEY": f"sk-deepseek-{secrets.token_hex(12)}",
    }
    web = WebHost(
        data_dir=tmp_path / "data",
        model="openai",
        token=token,
        extra_env={"DSH_MODEL_BASE_URL": model_server.base_url, "DSH_MODEL": "fake", **keys},
    )
    web.boot()
    exercised = 0
    try:
        session_id = web.create_session()
        live = f"/api/sessions/{session_id}/live"
        for query in (
            f"?token={token}",
            f"?token={token}x",
            f"?access={token}&token={token}",
            f"?token=wrong&note={token}",
        ):
            ws_handshake(web.base_url, live + query)
            exercised += 1
        for path in (
            f"/api/nope?token={token}",
            f"/api/sessions/{token}",
            f"/static/{token}.js",
            f"/api/sessions/{session_id}/events?before=x&token={token}",
        ):
            raw_request(web.base_url, "GET", path, {"Authorization": f"Bearer {token}"})
            raw_request(web.base_url, "GET", path)
            exercised += 2
        too_big = web.post(
            f"/api/sessions/{session_id}/messages", content=b"x" * (7 << 20)
        )  # over the message body limit
        assert too_big.status_code == 413
        for text in ("first question", "second question"):
            assert (
                web.post(f"/api/sessions/{session_id}/messages", {"text": text}).status_code == 202
            )
            exercised += 1
        wait_for(
            lambda: sum(e["type"] == "turn/end" for e in web.all_events(session_id)["events"]) >= 2,
            what="both model turns to fail",
        )
        history = json.dumps(web.all_events(session_id), ensure_ascii=False)
        assert web.terminate() == 0
    finally:
        web.stop()
    output = "".join(web.output)
    stored = "".join(
        path.read_text("utf-8") for path in (web.data_dir / "sessions").glob("*.jsonl")
    )
    assert "error" in history and "HTTP 401" in history, "the model failures were not exercised"
    for name, key in keys.items():
        assert key not in output, f"{name} leaked into the log"
        assert key not in stored, f"{name} leaked into a stored Session"
        assert key not in history, f"{name} leaked into history"
    announce = [line for line in output.splitlines() if token in line]
    assert len(announce) == 1 and announce[0].startswith("dsh web: http://"), announce
    sent = set(model_server.authorizations)
    assert sent == {f"Bearer {keys['DSH_API_KEY']}"}, "a provider key went to the wrong server"
    section = figures.section("security")
    section["secret_paths_exercised"] = exercised
    section["secrets_checked"] = len(keys) + 1
    section["secret_leaks"] = 0


def hostile_token() -> tuple[str, list[str]]:
    """A token with every character some log form escapes, and its random pieces.

    The pieces are hex, which no encoding changes: if any part of the token
    reaches the log, in any spelling, one of them shows literally. No space: a
    token may not hold whitespace (`check_token`); `test_redact` covers its `+`.
    """
    pieces = [secrets.token_hex(4) for _ in range(7)]
    a, b, c, d, e, f, g = pieces
    return f"q'{a}\"{b}%{c}&{d}<{e}ü{f}😀{g}", pieces


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_hostile_token_reaches_no_log_line_in_any_spelling(
    tmp_path: Path, figures: Figures, log_format: str
) -> None:
    token, pieces = hostile_token()
    web = WebHost(
        data_dir=tmp_path / "data",
        token=token,
        extra_args=["--access-log", "--log-format", log_format],
    )
    web.boot()
    bearer = ("Bearer " + token).encode().decode("latin-1")  # UTF-8 bytes on the wire
    auth = {"Authorization": bearer}
    exercised = 0
    try:
        created = raw_request(web.base_url, "POST", "/api/sessions", auth, b"")
        assert created.status == 201, created.text
        session_id = json.loads(created.body)["session"]["id"]
        live = f"/api/sessions/{session_id}/live"
        spellings = [
            quote(token, safe=""),
            quote(token, safe="'&"),
            quote_plus(token),
            quote(token, safe="").lower(),
            quote(quote(token, safe=""), safe=""),
        ]
        upgrades = []
        for spelled in [*spellings, quote(token[:-3], safe=""), quote(token + "x", safe="")]:
            upgrades.append(ws_handshake(web.base_url, f"{live}?token={spelled}").status)
            assert raw_request(web.base_url, "GET", f"/?token={spelled}").status == 200
            assert raw_request(web.base_url, "GET", f"/api/health?token={spelled}").status == 401
            exercised += 3
        # Spellings that decode to the token open the stream; the others are refused.
        assert upgrades == [101, 401, 101, 101, 401, 401, 401]
        for path in (
            f"/api/sessions/{spellings[0]}",
            f"/static/{spellings[0]}.js",
            f"/api/sessions/{session_id}/events?before=x&token={spellings[1]}",
        ):
            raw_request(web.base_url, "GET", path, auth)
            raw_request(web.base_url, "GET", path)
            exercised += 2
        # Declared too large: answered 413 before the body is read (and the connection closed).
        oversized = {**auth, "Content-Length": str(7 << 20)}  # over the message body limit
        too_big = raw_request(
            web.base_url, "POST", f"/api/sessions/{session_id}/messages", oversized
        )
        assert too_big.status == 413
        message = json.dumps({"text": f"my token is {token}"}).encode()
        as_json = {**auth, "Content-Type": "application/json"}
        path = f"/api/sessions/{session_id}/messages"
        sent = raw_request(web.base_url, "POST", path, as_json, message)
        assert sent.status == 202
        exercised += 2
        wait_for(
            lambda: any(e["type"] == "turn/end" for e in web.stored_log(session_id)[1:]),
            what="the demo model's turn",
        )
        assert web.terminate() == 0
    finally:
        web.stop()
    lines = "".join(web.output).splitlines()
    if log_format == "json":
        logged = [line for line in lines if line and not line.startswith("dsh web: http://")]
        entries = [json.loads(line) for line in logged]  # every other line is one object
        assert {"time", "level", "logger", "message"} <= set(entries[0])
        lines = [entry["message"] for entry in entries] + [line for line in lines if line]
    assert any('"GET /api/health?token=' in line for line in lines), "no access log line"
    assert any("WebSocket" in line and "401" in line for line in lines)
    leaks = [line for line in lines if any(piece in line for piece in pieces)]
    assert len(leaks) == 1 and leaks[0].startswith("dsh web: http://"), leaks
    section = figures.section("security")
    section["hostile_token_paths_exercised"] = exercised
    section["hostile_token_leaks"] = 0
