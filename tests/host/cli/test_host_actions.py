"""A plugin command's change, run by the `dsh web` the data dir names (`post_action`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx
import pytest

from dsh import ActionError, HostNotRunning
from dsh.cli.host_actions import post_action
from dsh.web.running import remember_run

pytestmark = pytest.mark.anyio

TOKEN = "file-token-0123456789abcdef"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("DSH_TOKEN", raising=False)
    remember_run(tmp_path, "http://127.0.0.1:8765/", None)
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n", encoding="ascii")
    token.chmod(0o600)
    return tmp_path


def answering(status: int, body: object, seen: list[httpx.Request]) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handle)


async def test_the_action_is_posted_with_the_token_and_its_result_returned(data_dir: Path) -> None:
    seen: list[httpx.Request] = []
    transport = answering(200, {"result": {"reminder": {"id": "rem-1"}}}, seen)

    result = await post_action(
        data_dir, "s 1", "tool-schedule", "pause", {"id": "rem-1"}, transport=transport
    )

    assert result == {"reminder": {"id": "rem-1"}}
    (request,) = seen
    assert str(request.url) == "http://127.0.0.1:8765/api/sessions/s%201/actions"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert json.loads(request.content) == {
        "plugin": "tool-schedule",
        "action": "pause",
        "args": {"id": "rem-1"},
    }


async def test_dsh_token_wins_over_the_file(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_TOKEN", "env-token-0123456789abcdef")
    seen: list[httpx.Request] = []
    await post_action(data_dir, "s", "p", "a", {}, transport=answering(200, {"result": 1}, seen))
    assert seen[0].headers["authorization"] == "Bearer env-token-0123456789abcdef"


@pytest.mark.parametrize("status", [404, 409, 422, 503])
async def test_a_refusal_is_the_host_s_own_sentence(data_dir: Path, status: int) -> None:
    body = {"error": {"code": "schedule_paused", "message": "rem-1 is already paused"}}
    with pytest.raises(ActionError) as caught:
        await post_action(data_dir, "s", "p", "a", {}, transport=answering(status, body, []))
    error = caught.value
    assert (error.status, error.code, error.message) == (
        status,
        "schedule_paused",
        "rem-1 is already paused",
    )


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (500, "<html>oops</html>"),
        (502, {"error": "x"}),
        (502, {"error": {"code": 1, "message": "x"}}),
        (200, {"nothing": 1}),
        (400, {}),
    ],
)
async def test_an_answer_without_an_error_message_says_what_came(
    data_dir: Path, status: int, body: object
) -> None:
    with pytest.raises(ActionError) as caught:
        await post_action(data_dir, "s", "p", "a", {}, transport=answering(status, body, []))
    assert caught.value.code == "unexpected_answer"
    assert caught.value.message == f"dsh web answered HTTP {status} without an error message"


async def test_no_web_json_means_no_host(tmp_path: Path) -> None:
    with pytest.raises(HostNotRunning) as caught:
        await post_action(tmp_path, "s", "p", "a", {})
    assert str(caught.value) == (
        f"no dsh web is running on {tmp_path}: start it, e.g. ./scripts/run"
    )


async def test_a_web_json_of_a_dead_process_is_stale(tmp_path: Path) -> None:
    dead = int(
        (await anyio.run_process([sys.executable, "-c", "import os; print(os.getpid())"])).stdout
    )
    remember_run(tmp_path, "http://127.0.0.1:8765/", None, pid=dead)
    with pytest.raises(HostNotRunning, match="no dsh web is running on"):
        await post_action(tmp_path, "s", "p", "a", {})


async def test_a_host_that_does_not_answer_is_stale_and_named(data_dir: Path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("Connection refused", request=request)

    with pytest.raises(HostNotRunning) as caught:
        await post_action(data_dir, "s", "p", "a", {}, transport=httpx.MockTransport(refuse))
    assert str(caught.value) == (
        f"no dsh web is running on {data_dir}: start it, e.g. ./scripts/run (its web.json "
        "names http://127.0.0.1:8765/, which does not answer: Connection refused)"
    )


async def test_without_a_token_the_command_says_where_it_looked(data_dir: Path) -> None:
    (data_dir / "token").unlink()
    with pytest.raises(HostNotRunning) as caught:
        await post_action(data_dir, "s", "p", "a", {})
    assert str(caught.value) == (
        f"dsh web runs on {data_dir} but its access token is not there; set DSH_TOKEN to the "
        "token it was started with"
    )


async def test_an_unusable_token_is_named_not_shown(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (data_dir / "token").chmod(0o644)
    with pytest.raises(HostNotRunning, match="open to other users"):
        await post_action(data_dir, "s", "p", "a", {})
    monkeypatch.setenv("DSH_TOKEN", "short")
    with pytest.raises(HostNotRunning, match=r"\$DSH_TOKEN is not a usable access token"):
        await post_action(data_dir, "s", "p", "a", {})
