"""HTTP fuzzing of the public API with schemathesis, against a real `dsh web` process.

schemathesis reads the host's own OpenAPI document (`/api/openapi.json`,
fetched with the token) and generates requests for every operation: valid
ones (positive mode) and ones that break the schema (negative mode: wrong
types, missing or extra fields, malformed bodies), each once with generated
Session ids and once with the id of a real, live Session (a fresh one per
operation and mode, since `DELETE` removes it) so that the handlers behind the
id check are reached too. Every response must be below 500, and
every error must be JSON in the one shape `{"error": {"code", "message"}}`.
The server's log must show no unhandled exception afterwards.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode
from schemathesis.core.result import Ok

from dsh.host.host import Host
from dsh.models.demo import DemoModel
from dsh.persistence import MemoryBackend
from dsh.web import WebSettings, create_app
from tests.support.webhost import WebHost

from .figures import Figures

pytestmark = [pytest.mark.reliability]

EXAMPLES = 25  # per operation, mode and id choice


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebHost]:
    with WebHost.start(tmp_path_factory.mktemp("fuzz"), model="demo") as running:
        yield running


def error_shape_problem(status: int, content_type: str, text: str) -> str | None:
    """Why a response is not an acceptable error (None when it is)."""
    if status >= 500:
        return f"server error {status}: {text[:300]}"
    if status < 400:
        return None
    if not content_type.startswith("application/json"):
        return f"{status} with content type {content_type!r}: {text[:200]}"
    try:
        body = json.loads(text)
    except ValueError:
        return f"{status} whose body is not JSON: {text[:200]}"
    error = body.get("error") if isinstance(body, dict) else None
    if (
        not isinstance(body, dict)
        or set(body) != {"error"}
        or not isinstance(error, dict)
        or set(error) != {"code", "message"}
        or not all(isinstance(error[key], str) and error[key] for key in ("code", "message"))
    ):
        return f"{status} not in the error shape: {text[:200]}"
    return None


def test_fuzzed_requests_never_get_a_5xx_and_every_error_has_the_error_shape(
    web: WebHost, scale: int, figures: Figures
) -> None:
    schema = schemathesis.openapi.from_url(f"{web.base_url}/api/openapi.json", headers=web.headers)

    def live_session() -> str:
        session_id = web.create_session()
        queued = web.post(
            f"/api/sessions/{session_id}/messages", {"text": "remind me in 1 hour to x"}
        )
        assert queued.status_code == 202
        return session_id

    counters: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    problems: list[str] = []

    def call(case: Case[Any]) -> None:
        response = case.call(base_url=web.base_url, headers=web.headers, timeout=15)
        content_type = (response.headers.get("content-type") or [""])[0]
        problem = error_shape_problem(response.status_code, content_type, response.text)
        statuses[str(response.status_code)] += 1
        counters["cases"] += 1
        if problem is not None:
            problems.append(f"{case.method} {case.formatted_path} body={case.body!r}: {problem}")

    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        operation = result.ok()
        counters["operations"] += 1
        for mode in GenerationMode:
            pinned_choices = (False, True) if "{session_id}" in operation.path else (False,)
            for pinned in pinned_choices:
                # A fresh live Session per operation: one a DELETE removed would make
                # every later operation stop at its 404.
                path = {"session_id": live_session()} if pinned else None
                strategy = operation.as_strategy(generation_mode=mode, path_parameters=path)
                fuzz = settings(
                    max_examples=EXAMPLES * scale,
                    deadline=None,
                    database=None,
                    suppress_health_check=list(HealthCheck),
                )(given(case=strategy)(call))
                try:
                    fuzz()
                except Unsatisfiable:
                    counters["unsatisfiable_strategies"] += 1  # nothing to break (no inputs)
    output = "".join(web.output)
    section = figures.section("fuzz")
    section.update(sorted(counters.items()))
    section["statuses"] = dict(sorted(statuses.items()))
    section["server_errors"] = sum(n for status, n in statuses.items() if status.startswith("5"))
    section["bad_error_shapes"] = len(problems)
    assert not problems, "\n".join(sorted(set(problems))[:40])
    assert "Traceback" not in output and "unhandled error" not in output, output
    assert web.get("/api/health").json()["ok"] is True


@pytest.mark.anyio
async def test_a_body_that_is_not_utf8_json_is_a_422_invalid_body(tmp_path: Path) -> None:
    """Found by the fuzzer: FastAPI answers an undecodable body with its own 400."""
    async with Host(backend=MemoryBackend(), model=DemoModel(), cwd=str(tmp_path)) as host:
        settings_ = WebSettings(token="t", port=8765)
        app = create_app(host, settings_)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport,
            base_url="http://127.0.0.1:8765",
            headers={"Authorization": "Bearer t", "Content-Type": "application/json"},
        ) as client:
            session_id = (await client.post("/api/sessions")).json()["session"]["id"]
            answers: list[Any] = []
            for body in (b"\xc3\xf6", b"\x11.\xd9P\x88I", b'{"text": "\xff"}'):
                for path in ("fork", "messages"):
                    response = await client.post(f"/api/sessions/{session_id}/{path}", content=body)
                    answers.append((response.status_code, response.json()["error"]["code"]))
    assert set(answers) == {(422, "invalid_body")}, answers
