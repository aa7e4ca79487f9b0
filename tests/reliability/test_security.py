"""Security of a real `dsh web` process: token, Host, Origin, body limits, id traversal.

The host runs through `wrapped_dsh.py` with its audit hook on, so every file
the process opens, lists, creates, renames or removes is logged: the id
traversal attacks are checked against what the process really touched, not
only against what it answered.

- Every `/api` route (read from the host's own OpenAPI document, plus unknown
  ones) and the WebSocket refuse a missing, wrong, query-string or
  non-Bearer token with 401 in the error shape (each attempt from its own
  loopback address, 127.1.x.y, so that the throttle below stays out of it).
- Failed authentication is throttled per address: after 20 in a minute, 429
  with `Retry-After` without reading the token, while another address's
  requests go on; the log holds summary lines, never an offered token.
- The static client (`/`, `/static/*`, `/plugins/*`) deliberately needs no
  token; it must then hold no Session data, no ids and no token.
- A Host header that does not name the server (DNS rebinding) is refused
  with 421 on every path, static files and the WebSocket included.
- A WebSocket whose Origin is not the served origin is refused with 403;
  API responses never grant cross-origin reads.
- A body over 1 MiB is refused with 413, with a Content-Length and chunked; a
  message's body over its own limit too, while a text of exactly 1 MiB is
  posted and one byte more is 422 naming the limit.
- `dsh web` as root refuses a data dir another user (uid 65534) owns, can
  write, planted a token in, or could swap (a folder above it), and a
  symlinked `sessions/`: exit 1, one line naming the fix, nothing served.
- Session ids that try to leave the data directory (encoded slashes and
  dots, absolute paths, NUL, 65 characters, non-ASCII) answer 404 or 422,
  static and plugin paths that try to leave their folders answer 404, and
  the process opens nothing outside the data directory meanwhile.
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx
import pytest

from dsh.web.settings import MESSAGE_BODY_BYTES, STATIC_DIR
from tests.support.webhost import REPO, WebHost, wait_for

from .figures import Figures
from .raw_http import RawResponse, raw_request, ws_handshake

pytestmark = [pytest.mark.reliability]

WRAPPER = Path(__file__).with_name("wrapped_dsh.py")
MIB = 1024 * 1024
MARKER = "secret-marker-7f3a9c"


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebHost]:
    root = tmp_path_factory.mktemp("security")
    audit = root / "audit.log"
    web = WebHost(
        data_dir=root / "data",
        model="demo",
        dsh=[sys.executable, str(WRAPPER)],
        extra_env={"DSH_TEST_AUDIT_LOG": str(audit)},
    )
    web.boot()
    try:
        yield web
    finally:
        web.stop()


@pytest.fixture(scope="module")
def session_id(audited: WebHost) -> str:
    """A live Session holding the marker text (and a reminder), so data exists to leak."""
    created = audited.create_session()
    response = audited.post(
        f"/api/sessions/{created}/messages", {"text": f"remind me in 1 hour to {MARKER}"}
    )
    assert response.status_code == 202
    wait_for(
        lambda: any(e["type"] == "turn/end" for e in audited.all_events(created)["events"]),
        what="the first turn",
    )
    return created


def audit_log(web: WebHost) -> Path:
    return Path(web.extra_env["DSH_TEST_AUDIT_LOG"])


def is_error(response: RawResponse | httpx.Response, status: int, code: str) -> bool:
    body = json.loads(response.text)
    return (
        response.status_code if isinstance(response, httpx.Response) else response.status
    ) == status and body == {"error": {"code": code, "message": body["error"]["message"]}}


def api_routes(web: WebHost, session_id: str) -> list[tuple[str, str]]:
    """Every `(method, path)` of the OpenAPI document, with a real Session id."""
    document = web.get("/api/openapi.json").json()
    routes = [
        (method.upper(), path.replace("{session_id}", session_id))
        for path, operations in document["paths"].items()
        for method in operations
    ]
    return [*routes, ("GET", "/api/openapi.json"), ("GET", "/api/no-such-route"), ("GET", "/api")]


def strangers() -> Iterator[str]:
    """Loopback addresses other than 127.0.0.1, one per wrong attempt (127.1.0.1, …)."""
    return (f"127.1.{n // 250}.{n % 250 + 1}" for n in itertools.count())


def test_every_api_route_and_the_websocket_require_the_token(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    tried = 0
    sources = strangers()
    wrong = {
        "missing": {},
        "wrong": {"Authorization": "Bearer not-the-token"},
        "prefix": {"Authorization": f"Bearer {audited.token[:-1]}"},
        "basic": {"Authorization": f"Basic {audited.token}"},
        "bare": {"Authorization": audited.token},
    }
    for method, path in api_routes(audited, session_id):
        for name, headers in wrong.items():
            body = b"" if method == "POST" else None
            response = raw_request(
                audited.base_url, method, path, headers, body, source=next(sources)
            )
            assert response.status == 401, (method, path, name, response.status)
            assert is_error(response, 401, "unauthorized")
            assert response.headers.get("www-authenticate") == "Bearer"
            tried += 1
        # The token in the query string is for WebSockets only (browsers cannot set
        # headers there); HTTP requests must not learn to carry it in URLs.
        query = raw_request(
            audited.base_url, method, f"{path}?token={audited.token}", source=next(sources)
        )
        assert query.status == 401, (method, path)
        tried += 1
    live = f"/api/sessions/{session_id}/live"
    for suffix, headers in [
        ("", {}),
        ("?token=wrong", {}),
        (f"?token={audited.token[:-1]}", {}),
        ("", {"Authorization": "Bearer wrong"}),
    ]:
        refused = ws_handshake(audited.base_url, live + suffix, headers, source=next(sources))
        assert refused.status == 401 and is_error(refused, 401, "unauthorized")
        tried += 1
    assert ws_handshake(audited.base_url, f"{live}?token={audited.token}").status == 101
    header = {"Authorization": f"Bearer {audited.token}"}
    assert ws_handshake(audited.base_url, live, header).status == 101
    figures.count("security", "unauthenticated_requests", tried)


def static_paths(web: WebHost) -> list[str]:
    modules = web.get("/api/client-modules").json()["modules"]
    files = sorted(path.name for path in STATIC_DIR.iterdir() if path.is_file())
    return ["/", *(f"/static/{name}" for name in files), *(module["url"] for module in modules)]


def test_static_client_files_need_no_token_and_hold_no_session_data(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    paths = static_paths(audited)
    assert any(path.startswith("/plugins/") for path in paths)
    stored_ids = [p.stem for p in (audited.data_dir / "sessions").glob("*.jsonl")]
    assert session_id in stored_ids
    for path in paths:
        for method in ("GET", "HEAD"):
            response = raw_request(audited.base_url, method, path)
            assert response.status == 200, (method, path, response.status)
            assert "set-cookie" not in response.headers
            for secret in (MARKER, audited.token, *stored_ids):
                assert secret not in response.text, (path, secret)
    figures.count("security", "static_files_checked", len(paths))


HOSTILE_HOSTS = [
    "evil.example",
    "evil.example:{port}",
    "127.0.0.1.evil.example:{port}",
    "localhost.evil.example",
    "127.0.0.1:1",
    "[::2]:{port}",
    "127.0.0.1:{port}@evil.example",
    "",
]


def test_a_host_header_that_is_not_this_server_is_refused_everywhere(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    port = urlsplit(audited.base_url).port
    bearer = {"Authorization": f"Bearer {audited.token}"}
    paths = [
        ("GET", "/"),
        ("GET", "/static/app.js"),
        ("GET", "/plugins/client-ui-schedule/schedule-reminder.js"),
        ("GET", "/api/health"),
        ("GET", f"/api/sessions/{session_id}/events"),
        ("POST", "/api/sessions"),
    ]
    tried = 0
    for template in HOSTILE_HOSTS:
        host = template.format(port=port)
        for method, path in paths:
            response = raw_request(audited.base_url, method, path, bearer, host=host)
            assert response.status == 421, (host, path, response.status, response.text)
            assert is_error(response, 421, "host_not_allowed")
            tried += 1
        live = f"/api/sessions/{session_id}/live?token={audited.token}"
        refused = ws_handshake(audited.base_url, live, host=host)
        assert refused.status == 421 and is_error(refused, 421, "host_not_allowed"), host
        tried += 1
    assert http10_without_host(audited) == 421
    tried += 1
    figures.count("security", "host_header_attacks", tried)


def http10_without_host(web: WebHost) -> int:
    """HTTP/1.0 may omit Host entirely; the guard must still refuse it."""
    parts = urlsplit(web.base_url)
    assert parts.hostname is not None and parts.port is not None
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as conn:
        conn.sendall(b"GET /static/app.js HTTP/1.0\r\n\r\n")
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    return int(reply.split(b" ", 2)[1])


def test_a_websocket_from_another_origin_is_refused_and_the_api_grants_no_cors(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    port = urlsplit(audited.base_url).port
    live = f"/api/sessions/{session_id}/live?token={audited.token}"
    hostile = [
        "http://evil.example",
        "null",
        f"http://127.0.0.1:{port + 1 if port else 1}",
        f"https://127.0.0.1:{port}",
        f"http://127.0.0.1:{port}.evil.example",
        f"http://localhost:{port}",  # another origin name, even if it is the same machine
        "file://",
    ]
    for origin in hostile:
        refused = ws_handshake(audited.base_url, live, {"Origin": origin})
        assert refused.status == 403 and is_error(refused, 403, "origin_not_allowed"), origin
    own = ws_handshake(audited.base_url, live, {"Origin": f"http://127.0.0.1:{port}"})
    assert own.status == 101
    for method, path in api_routes(audited, session_id)[:4]:
        response = raw_request(
            audited.base_url,
            method,
            path,
            {"Origin": "http://evil.example", "Authorization": f"Bearer {audited.token}"},
        )
        assert not any(name.startswith("access-control-") for name in response.headers), path
    preflight = raw_request(
        audited.base_url,
        "OPTIONS",
        "/api/sessions",
        {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert preflight.status == 401
    assert not any(name.startswith("access-control-") for name in preflight.headers)
    figures.count("security", "origin_attacks", len(hostile) + 5)


def test_bodies_over_one_mebibyte_get_413_with_and_without_content_length(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    over = json.dumps({"text": "x" * MIB}).encode()
    message_over = json.dumps({"text": "x" * (MESSAGE_BODY_BYTES + 1)}).encode()
    paths = [
        ("/api/sessions", over),
        (f"/api/sessions/{session_id}/messages", message_over),
        (f"/api/sessions/{session_id}/fork", over),
    ]
    tried = 0
    for path, body in paths:
        sized = audited.post(path, content=body, headers={"Content-Type": "application/json"})
        assert sized.status_code == 413 and is_error(sized, 413, "body_too_large"), path

        def chunks(body: bytes = body) -> Iterator[bytes]:
            for start in range(0, len(body), 64 * 1024):
                yield body[start : start + 64 * 1024]

        chunked = audited.post(path, content=chunks(), headers={"Content-Type": "application/json"})
        assert chunked.request.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in chunked.request.headers
        assert chunked.status_code == 413 and is_error(chunked, 413, "body_too_large"), path
        tried += 2
    figures.count("security", "oversized_bodies", tried)


def test_a_message_of_exactly_one_mebibyte_is_posted_and_one_byte_more_is_422(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    # Issue 35: 1 MiB is the documented limit of a message's text, yet its body
    # (the text and `{"text": ""}` around it) passed the 1 MiB body limit: 413.
    url = f"/api/sessions/{session_id}/messages"
    exact = audited.post(url, json={"text": "y" * MIB})
    assert exact.status_code == 202, exact.text[:300]
    escaped = audited.post(url, json={"text": '"\n' * (MIB // 2)})  # 2 bytes of JSON each
    assert escaped.status_code == 202, escaped.text[:300]
    over = audited.post(url, json={"text": "y" * (MIB + 1)})
    assert is_error(over, 422, "invalid_body"), over.text[:300]
    assert f"longer than the limit of {MIB:,} bytes" in over.json()["error"]["message"]
    figures.count("security", "exact_limit_messages_posted", 2)


TRAVERSAL_IDS = [
    "..%2F..%2Fetc%2Fpasswd",
    "..%2f..%2f..%2f..%2fetc%2fpasswd",
    "%2e%2e",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "%2E%2E%5C%2E%2E%5Cetc%5Cpasswd",
    "..",
    ".",
    "%2Fetc%2Fpasswd",
    "%2F%2Fetc%2Fpasswd",
    "C%3A%5Cwindows%5Cwin.ini",
    "a%00b",
    "%00",
    "passwd%00.jsonl",
    "x" * 65,
    "a" + "b" * 64,
    quote("séance"),
    quote("ſession"),
    quote("会话"),
    quote("ａｂｃ"),
    "-leading",
    "_leading",
    "a.jsonl",
    "sessions%2F..%2F..%2Fdecoy",
    "..%252F..%252Fetc%252Fpasswd",
    "%C0%AE%C0%AE%2Fetc",
    "a%0Ab",
    "a%20b",
]


STATIC_TRAVERSALS = [
    "/static/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/static/%2e%2e/%2e%2e/persistence/jsonl.py",
    "/static/..%5C..%5Cweb%5Capi.py",
    "/static/%2Fetc%2Fpasswd",
    "/static//etc/passwd",
    "/static/.%2e/settings.py",
    "/static/app.js%00.html",
    "/plugins/client-ui-schedule/..%2Fplugin.py",
    "/plugins/..%2F..%2Fetc/passwd",
    "/plugins/client-ui-schedule/%2e%2e%2f__init__.py",
    "/plugins/tool-schedule/plugin.py",
]


def test_session_id_traversal_answers_404_or_422_and_touches_nothing_outside_the_data_dir(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    data_dir = audited.data_dir.resolve()
    decoy = data_dir.parent / "decoy.jsonl"
    decoy.write_text('{"version":1}\n', "utf-8")
    log = audit_log(audited)
    start = log.stat().st_size
    bearer = {"Authorization": f"Bearer {audited.token}"}
    statuses: Counter[int] = Counter()
    tried = 0
    for attack in TRAVERSAL_IDS:
        base = f"/api/sessions/{attack}"
        for method, path, body in [
            ("GET", base, None),
            ("GET", f"{base}/events", None),
            ("GET", f"{base}/events?from=0", None),
            ("POST", f"{base}/resume", b""),
            ("POST", f"{base}/fork", b"{}"),
            ("POST", f"{base}/messages", b'{"text": "hi"}'),
        ]:
            headers = {**bearer, "Content-Type": "application/json"}
            response = raw_request(audited.base_url, method, path, headers, body)
            statuses[response.status] += 1
            assert response.status in (404, 422), (method, path, response.status, response.text)
            assert json.loads(response.text)["error"]["code"]
            tried += 1
        refused = ws_handshake(audited.base_url, f"{base}/live?token={audited.token}")
        assert refused.status in (403, 404), (attack, refused.status)
        tried += 1
    for path in STATIC_TRAVERSALS:
        response = raw_request(audited.base_url, "GET", path)
        statuses[response.status] += 1
        assert response.status == 404 and is_error(response, 404, "not_found"), path
        tried += 1
    audit = log.read_bytes()
    assert f"{session_id}.jsonl".encode() in audit[:start], "the audit hook saw nothing"
    touched = audit[start:].decode("utf-8", errors="replace").splitlines()
    outside = [line for line in touched if not allowed(line.split("\t", 1)[1], data_dir)]
    assert not outside, outside
    assert not any("passwd" in line or "decoy" in line for line in touched)
    section = figures.section("security")
    section["traversal_ids"] = len(TRAVERSAL_IDS) + len(STATIC_TRAVERSALS)
    section["traversal_requests"] = tried
    section["traversal_statuses"] = {str(k): v for k, v in sorted(statuses.items())}
    section["files_touched_during_traversal"] = len(touched)
    section["files_touched_outside_data_dir"] = len(outside)


def allowed(path: str, data_dir: Path) -> bool:
    """Inside the data dir, or code being imported lazily (Python's own files)."""
    resolved = Path(path).resolve()
    if resolved.is_relative_to(data_dir):
        return True
    code_roots = [Path(sys.prefix), Path(sys.base_prefix), REPO / "host", REPO / "plugins"]
    is_code = resolved.suffix in (".py", ".pyc", ".so") or resolved.is_dir()
    return is_code and any(resolved.is_relative_to(root.resolve()) for root in code_roots)


def test_failed_authentication_is_throttled_per_address_and_logged_in_summaries(
    audited: WebHost, session_id: str, figures: Figures
) -> None:
    attacker, guesses = "127.2.0.1", 500
    logged_before = len(audited.output)
    answers: Counter[int] = Counter()
    retry_after: set[str] = set()
    offered = [f"guess-{secrets.token_hex(8)}" for _ in range(guesses)]
    for number, guess in enumerate(offered):
        response = raw_request(
            audited.base_url,
            "GET",
            "/api/health",
            {"Authorization": f"Bearer {guess}"},
            source=attacker,
        )
        answers[response.status] += 1
        if response.status == 429:
            assert is_error(response, 429, "too_many_failures")
            retry_after.add(response.headers["retry-after"])
        if number % 100 == 0:  # the person's own requests go on meanwhile
            assert audited.get(f"/api/sessions/{session_id}").status_code == 200
    right = {"Authorization": f"Bearer {audited.token}"}
    from_attacker = raw_request(audited.base_url, "GET", "/api/health", right, source=attacker)
    socket_ = ws_handshake(
        audited.base_url, f"/api/sessions/{session_id}/live?token=x", source=attacker
    )
    elsewhere = raw_request(audited.base_url, "GET", "/api/health", right, source="127.2.0.2")

    assert answers == {401: 20, 429: guesses - 20}  # 20 tokens compared, not 500
    assert all(1 <= int(seconds) <= 60 for seconds in retry_after)
    assert from_attacker.status == 429 and socket_.status == 429  # the token is not looked at
    assert elsewhere.status == 200

    def summaries() -> list[str]:
        return [line for line in audited.output[logged_before:] if "failed authentication" in line]

    # The count shows at once after a quiet spell, else in the summary that ends the spell.
    wait_for(lambda: any(attacker in line for line in summaries()), what="the summary line")
    logged = summaries()
    assert 1 <= len(logged) <= 3, logged  # a summary, not a line per attempt
    text = "".join(audited.output)
    assert not any(guess in text for guess in offered)
    section = figures.section("security")
    section["auth_guesses_sent"] = guesses
    section["auth_guesses_compared"] = answers[401]
    section["auth_guesses_throttled"] = answers[429]
    section["auth_log_lines"] = len(logged)


def plant(root: Path, case: str) -> Path:
    """A data dir another user (uid 65534) prepared or can change, one way per `case`."""
    data = root / "dsh"
    data.mkdir(mode=0o700)
    other = 65534
    if case == "owned by another user":
        os.chown(data, other, other)
    elif case == "group-writable":
        data.chmod(0o770)
    elif case == "planted token":
        token = data / "token"
        token.write_text("planted-by-another-user-0123\n", encoding="ascii")
        token.chmod(0o600)
        os.chown(token, other, other)
    elif case == "sessions of another user":
        (data / "sessions").mkdir(mode=0o700)
        os.chown(data / "sessions", other, other)
    elif case == "world-writable trash":
        (data / "trash").mkdir()
        (data / "trash").chmod(0o777)
    elif case == "symlinked sessions":
        (root / "elsewhere").mkdir(mode=0o700)
        (data / "sessions").symlink_to(root / "elsewhere")
    else:  # "under a folder another user owns"
        data.rmdir()
        (root / "theirs").mkdir()
        os.chown(root / "theirs", other, other)
        data = root / "theirs" / "dsh"
    return data


UNSAFE = [
    "owned by another user",
    "group-writable",
    "planted token",
    "sessions of another user",
    "world-writable trash",
    "symlinked sessions",
    "under a folder another user owns",
]


@pytest.mark.skipif(os.geteuid() != 0, reason="a second user's files need root to make")
@pytest.mark.parametrize("case", UNSAFE)
def test_dsh_web_as_root_refuses_a_data_dir_another_user_could_have_prepared(
    tmp_path: Path, case: str, figures: Figures
) -> None:
    data = plant(tmp_path, case)
    env = {key: value for key, value in os.environ.items() if key != "DSH_TOKEN"}
    command = [sys.executable, "-m", "dsh.cli", "web", "--data-dir", str(data), "--port", "0"]

    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True, timeout=60)

    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("dsh: error: ")
    assert any(fix in line for fix in ("chown", "chmod", "rm ", "--data-dir")), line  # the fix
    assert "dsh web:" not in done.stdout  # never served
    assert not (data / "lock").exists()
    figures.count("security", "unsafe_data_dirs_refused")
