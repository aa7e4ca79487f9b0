"""The HTTP side of Web Push (DESIGN §14.2); errors are `{"error": {"code", "message"}}`.

Behind the host's token (under `/api`):

- `GET /api/push/key` → `{"publicKey"}`;
- `POST /api/push/subscriptions` (`subscriptions.SubscriptionBody`) → 201
  `{"id"}`; a bad body → 422 `invalid_subscription` naming the field; the
  limit reached → 422 `too_many_subscriptions`; nothing is stored on a
  refusal;
- `DELETE /api/push/subscriptions/{id}` → 204; a malformed id → 422
  `invalid_id`, an unknown one → 404 `not_found`.

Outside `/api`, without the token:

- `GET /sw.js`: the service worker, `Service-Worker-Allowed: /` so it may
  control the whole origin;
- `POST /push/act` `{"capability", "action": "snooze" | "done"}`: the
  notification's buttons. The capability (`capability.py`) is the
  credential and names the one alert it acts on: Done reads that alert
  (`PluginContext.alerts.read`), Snooze runs the snooze the alert named with
  `"seconds": 600`. A forged, altered or expired one → 403 `forbidden`; an
  alert without a snooze → 409 `no_snooze`; a refused action → its own
  status and code. Every answer is `Cache-Control: no-store`.

Before `WebPush.open()` has finished, the routes that need the keys or the
store answer 503 `not_ready`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from dsh import ActionError, PluginContext, SessionNotFound, StorageError

from ..config import NotifyConfig
from .capability import MAX_LENGTH, CapabilityError, verify
from .keys import VapidKeys
from .subscriptions import (
    ID_PATTERN,
    SubscriptionBody,
    SubscriptionStore,
    SubscriptionStoreError,
    TooManySubscriptions,
)

__all__ = ["SNOOZE_SECONDS", "SW_PATH", "Opened", "push_routes"]

SW_PATH = Path(__file__).parent.parent / "static" / "sw.js"
SNOOZE_SECONDS = 600
_NO_STORE = {"Cache-Control": "no-store"}


@dataclass(frozen=True, slots=True)
class Opened:
    """What the routes need once `WebPush.open()` has run."""

    keys: VapidKeys
    store: SubscriptionStore


class _Act(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    capability: Annotated[str, StringConstraints(min_length=1, max_length=MAX_LENGTH)]
    action: Literal["snooze", "done"]


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers=headers)


def _invalid(problem: ValidationError) -> str:
    """The first problem of a validation error as one sentence naming the field."""
    first = problem.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "body"
    return f"{where}: {first['msg']}"


async def _json(request: Request) -> Any:
    """The request body as JSON; `ValueError` when it is not."""
    return json.loads(await request.body())


def push_routes(
    context: PluginContext[NotifyConfig],
    opened: Callable[[], Opened | None],
    clock: Callable[[], float],
) -> list[BaseRoute]:
    """The routes of the module docstring, for the host `context` belongs to."""
    config = context.config

    def starting() -> Response:
        return _error(503, "not_ready", "Web Push is still starting; try again in a moment")

    async def key(request: Request) -> Response:
        ready = opened()
        if ready is None:
            return starting()
        return JSONResponse({"publicKey": ready.keys.public_key})

    async def subscribe(request: Request) -> Response:
        ready = opened()
        if ready is None:
            return starting()
        try:
            raw = await _json(request)
        except ValueError:
            return _error(422, "invalid_subscription", "the body is not JSON")
        try:
            body = SubscriptionBody.model_validate(
                raw, context={"allow_insecure": config.allow_insecure_endpoints}
            )
        except ValidationError as problem:
            return _error(422, "invalid_subscription", _invalid(problem))
        try:
            subscription_id = await ready.store.add(body, config.max_subscriptions)
        except TooManySubscriptions as problem:
            return _error(422, "too_many_subscriptions", str(problem))
        except (SubscriptionStoreError, StorageError) as problem:
            return _error(503, "storage_unavailable", str(problem))
        return JSONResponse({"id": subscription_id}, 201)

    async def unsubscribe(request: Request) -> Response:
        ready = opened()
        if ready is None:
            return starting()
        subscription_id = request.path_params["id"]
        if ID_PATTERN.fullmatch(subscription_id) is None:
            return _error(422, "invalid_id", "a push subscription id is 22 URL-safe characters")
        try:
            removed = await ready.store.remove(subscription_id)
        except (SubscriptionStoreError, StorageError) as problem:
            return _error(503, "storage_unavailable", str(problem))
        if not removed:
            return _error(404, "not_found", f"no push subscription {subscription_id}")
        return Response(status_code=204)

    async def act(request: Request) -> Response:
        ready = opened()
        if ready is None:
            return _error(503, "not_ready", "Web Push is still starting", _NO_STORE)
        try:
            body = _Act.model_validate(await _json(request))
        except ValueError as problem:  # ValidationError included
            message = _invalid(problem) if isinstance(problem, ValidationError) else "not JSON"
            return _error(422, "invalid_request", message, _NO_STORE)
        try:
            allowed = verify(ready.keys.secret, body.capability, now=clock())
        except CapabilityError as problem:
            return _error(403, "forbidden", str(problem), _NO_STORE)
        try:
            if body.action == "done":
                unread = await context.alerts.read(allowed.session_id, allowed.seq)
                return JSONResponse({"done": True, "unread": unread}, headers=_NO_STORE)
            if allowed.snooze is None:
                return _error(409, "no_snooze", "this alert cannot be snoozed", _NO_STORE)
            spec = allowed.snooze
            result = await context.actions.run(
                allowed.session_id,
                spec.plugin,
                spec.action,
                {**spec.args, "seconds": SNOOZE_SECONDS},
            )
        except ActionError as problem:
            return _error(problem.status, problem.code, problem.message, _NO_STORE)
        except SessionNotFound:
            return _error(404, "not_found", "that conversation no longer exists", _NO_STORE)
        except StorageError as problem:
            return _error(503, "storage_unavailable", str(problem), _NO_STORE)
        return JSONResponse({"snoozed": result}, headers=_NO_STORE)

    async def worker(request: Request) -> Response:
        headers = {"Service-Worker-Allowed": "/", "Cache-Control": "no-cache"}
        return FileResponse(SW_PATH, media_type="text/javascript; charset=utf-8", headers=headers)

    return [
        Route("/api/push/key", key, methods=["GET"]),
        Route("/api/push/subscriptions", subscribe, methods=["POST"]),
        Route("/api/push/subscriptions/{id}", unsubscribe, methods=["DELETE"]),
        Route("/push/act", act, methods=["POST"]),
        Route("/sw.js", worker, methods=["GET"]),
    ]
