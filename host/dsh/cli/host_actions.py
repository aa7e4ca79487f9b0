"""Plugin commands that change something: a person's action, run by the `dsh web` of the data dir.

A command never starts an agent (`dsh_cli_commands`), so a plugin command that
changes a Session asks the host that runs it: `post_action` reads the data
dir's `web.json` (`dsh.web.running`), takes the token from `$DSH_TOKEN`, else
`<data-dir>/token`, and posts `{"plugin", "action", "args"}` to
`POST /api/sessions/{id}/actions` with httpx. The answer's `result` is
returned; a refusal is the host's own `ActionError` (status, code, sentence).

No `web.json`, a dead pid, or a host that does not answer at the address it
names (a stale file) is `HostNotRunning`: "no dsh web is running on DIR:
start it, e.g. ./scripts/run".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final
from urllib.parse import quote

import httpx
from pydantic import JsonValue

from ..plugins.errors import ActionError, HostNotRunning
from ..web.errors import TokenError
from ..web.running import running_web
from ..web.token_file import TOKEN_ENV, TOKEN_FILE, check_token, read_token

__all__ = ["TIMEOUT_SECONDS", "post_action"]

# An action answers once its change is durable: a few store round trips, or a
# store that is struggling (the host's own retries then answer 503 first).
TIMEOUT_SECONDS: Final = 30.0


async def post_action(
    directory: Path,
    session_id: str,
    plugin: str,
    action: str,
    args: dict[str, JsonValue],
    *,
    transport: httpx.AsyncBaseTransport | None = None,
) -> JsonValue:
    """Run `plugin`'s `action` on Session `session_id` through the `dsh web` of `directory`.

    Returns the action's result. Raises `HostNotRunning` (no host answers
    there, or its token cannot be found) and `ActionError` (the host refused).
    """
    running = running_web(directory)
    if running is None:
        raise HostNotRunning(_not_running(directory))
    token = _token(directory)
    url = f"{running.url.rstrip('/')}/api/sessions/{quote(session_id, safe='')}/actions"
    body = {"plugin": plugin, "action": action, "args": args}
    try:
        async with httpx.AsyncClient(transport=transport, timeout=TIMEOUT_SECONDS) as client:
            response = await client.post(
                url, json=body, headers={"Authorization": f"Bearer {token}"}
            )
    except httpx.TransportError as error:
        raise HostNotRunning(
            f"{_not_running(directory)} (its web.json names {running.url}, which does not "
            f"answer: {error or type(error).__name__})"
        ) from error
    answer = _json(response)
    if response.status_code == 200 and isinstance(answer, dict) and "result" in answer:
        return answer["result"]
    raise _refusal(response.status_code, answer)


def _not_running(directory: Path) -> str:
    return f"no dsh web is running on {directory}: start it, e.g. ./scripts/run"


def _token(directory: Path) -> str:
    fixed = os.environ.get(TOKEN_ENV)
    try:
        if fixed:
            return check_token(fixed, f"${TOKEN_ENV}")
        token = read_token(directory / TOKEN_FILE)
    except TokenError as error:
        raise HostNotRunning(str(error)) from error
    if token is None:
        raise HostNotRunning(
            f"dsh web runs on {directory} but its access token is not there; "
            f"set {TOKEN_ENV} to the token it was started with"
        )
    return token


def _json(response: httpx.Response) -> JsonValue:
    try:
        answer: JsonValue = response.json()
    except ValueError:
        return None
    return answer


def _refusal(status: int, answer: JsonValue) -> ActionError:
    """The host's `{"error": {"code", "message"}}` as an `ActionError`."""
    error = answer.get("error") if isinstance(answer, dict) else None
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        if isinstance(code, str) and isinstance(message, str):
            return ActionError(code, message, status=status)
    return ActionError(
        "unexpected_answer",
        f"dsh web answered HTTP {status} without an error message",
        status=status,
    )
