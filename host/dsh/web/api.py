"""The public HTTP API under `/api` (DESIGN §9), as one FastAPI router.

Every body is a strict pydantic model (unknown fields are errors). Every id
is checked with `validate_session_id` before anything touches storage.
Acknowledgements mean what they say: 201 for a new or forked Session only
after its storage acknowledged a flush (`Sessions.create` / `Sessions.fork`
guarantee it); 202 for a message means *queued*, not stored; 200 for an
action only once the plugin's change is durable (the plugin awaits its
barrier before it answers); 200 for a new title only once its `session/title`
is stored. Reading a cold Session (its header, its plugins' states or its
history) never makes it live and never publishes an agent, and neither do
renaming, deleting or stopping it (`Sessions.set_title`, `delete`,
`cancel_turn`).
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from ..base.jsonbytes import encode
from ..base.limits import MAX_DEPTH, MAX_EVENT_BYTES, check_text
from ..base.version import VERSION as __version__
from ..host.host import Host
from ..host.search import ranked_rows
from ..persistence.errors import SessionExists, SessionNotFound
from ..session.events import MAX_TITLE_CHARS, validate_time_zone
from ..session.facts import without_bidi
from ..session.ids import validate_session_id
from .errors import ApiError, error_body
from .history import PageRequest
from .state import web_state
from .static import module_url

__all__ = ["ActionBody", "ForkBody", "MessageBody", "ReadBody", "TitleBody", "router"]

MAX_PAGE = 500
MAX_SEQ = 2**53 - 1  # what a browser's number holds exactly
MAX_QUERY = 200

router = APIRouter(prefix="/api")

_BODY = ConfigDict(strict=True, extra="forbid", frozen=True)


class ForkBody(BaseModel):
    """`POST /api/sessions/{id}/fork`: copy events `[0, atSeq)`; absent: the whole log."""

    model_config = _BODY

    at_seq: Annotated[int | None, Field(alias="atSeq", ge=0)] = None


class MessageBody(BaseModel):
    """`POST /api/sessions/{id}/messages`: the user's message, and the IANA zone the
    reader is in (the browser's `Intl.DateTimeFormat().resolvedOptions().timeZone`)."""

    model_config = _BODY

    text: Annotated[str, Field(min_length=1)]
    time_zone: Annotated[str | None, Field(alias="timeZone")] = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the message is empty")
        check_text(value, "the message")  # LimitExceeded is a ValueError: 422
        return value

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        return None if value is None else validate_time_zone(value)


class TitleBody(BaseModel):
    """`PATCH /api/sessions/{id}`: the Session's new title (one line; spaces around it
    and bidirectional controls in it are dropped: `dsh.session.facts`)."""

    model_config = _BODY

    title: Annotated[str, Field(min_length=1, max_length=MAX_TITLE_CHARS)]

    @field_validator("title")
    @classmethod
    def _one_line(cls, value: str) -> str:
        # Dropped, not refused: they are invisible, and a paste can carry them honestly.
        title = without_bidi(value).strip()
        if not title:
            raise ValueError("the title is empty")
        if any(char in title for char in "\r\n\u2028\u2029"):
            raise ValueError("a title is one line")
        if any(unicodedata.category(char) == "Cc" for char in title):
            raise ValueError("a title has no control characters (NUL, ESC, DEL, …)")
        return title


class ActionBody(BaseModel):
    """`POST /api/sessions/{id}/actions`: run `action` of `plugin` with `args` (an object)."""

    model_config = _BODY

    plugin: Annotated[str, Field(min_length=1, max_length=64)]
    action: Annotated[str, Field(min_length=1, max_length=64)]
    args: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("args")
    @classmethod
    def _bounded(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        # Finite and within the host's depth: what an action stores must read back.
        encode(value, max_depth=MAX_DEPTH, max_bytes=MAX_EVENT_BYTES, what="args")
        return value


class ReadBody(BaseModel):
    """`POST /api/sessions/{id}/read`: the alerts up to `throughSeq` (inclusive) are read."""

    model_config = _BODY

    through_seq: Annotated[int, Field(alias="throughSeq", ge=0, le=MAX_SEQ)]


def _host(request: Request) -> Host:
    return web_state(request.app).host


def _checked(session_id: str) -> str:
    validate_session_id(session_id)  # InvalidSessionId → 404 invalid_session_id
    return session_id


def _json(status: int, content: dict[str, Any]) -> JSONResponse:
    return JSONResponse(content, status_code=status)


#: The keys `/api/health` answers itself; a plugin's `dsh_health` may not use them.
HEALTH_KEYS = frozenset({"ok", "version", "storage", "sessions", "unconfirmed", "error"})


@router.get("/health", summary="Liveness, version, and whether storage keeps up")
async def health(request: Request) -> JSONResponse:
    """200 `{"ok": true, "version"}`; 503 `{"ok": false, "storage": "degraded",
    "sessions", "unconfirmed", "error": {"code": "storage_degraded", "message"}}` while
    some Session has events storage has not confirmed (its writes are being retried).
    Answered from memory: a stalled disk never stalls it. Plugins add keys of their
    own (`dsh_health`), never the status."""
    state = getattr(request.app.state, "web", None)
    report = state.host.catalogue.health() if state is not None else None
    plugins = state.host.contributions.health(HEALTH_KEYS) if state is not None else {}
    if report is None or report.ok:
        return _json(200, {"ok": True, "version": __version__, **plugins})
    sessions, events = len(report.degraded), report.unconfirmed_events
    message = (
        f"{sessions} session{'s' if sessions != 1 else ''} "
        f"{'have' if sessions != 1 else 'has'} {events} "
        f"event{'s' if events != 1 else ''} not yet stored; storage is being retried"
    )
    return _json(
        503,
        {
            "ok": False,
            "version": __version__,
            "storage": "degraded",
            "sessions": sessions,
            "unconfirmed": events,
            **error_body("storage_degraded", message),
            **plugins,
        },
    )


@router.get("/sessions", summary="Every stored or live Session, newest first")
async def list_sessions(
    request: Request, q: Annotated[str | None, Query(max_length=MAX_QUERY)] = None
) -> JSONResponse:
    """`?q=` finds words: first the Sessions whose title or first message contains
    them (case-insensitive) or whose id starts with them, then those whose messages
    do (the search index, best-ranked first, Chinese too), each with `"match":
    {"seq", "snippet"}` — its best message. Each entry's `unread` counts its
    unread alerts (kept by the host, not read from logs)."""
    host = _host(request)
    text = q.strip() if q else ""
    rows = await host.catalogue.list(None)
    if text:
        chosen = ranked_rows(rows, text, await host.search.find(text))
    else:
        chosen = [(row, None) for row in rows]
    unread = await host.attention.unread([row.id for row, _ in chosen])
    return _json(
        200,
        {
            "sessions": [
                {
                    **row.to_dict(),
                    "unread": unread.get(row.id, 0),
                    **({} if match is None else {"match": match.to_dict()}),
                }
                for row, match in chosen
            ]
        },
    )


@router.post("/sessions", status_code=201, summary="A new live Session and its root agent")
async def create_session(request: Request) -> JSONResponse:
    host = _host(request)
    agent = await host.create_session(origin="web")
    return _json(201, {"session": host.catalogue.summary(agent.session).to_dict()})


@router.get(
    "/sessions/{session_id}", summary="A Session's header, length, agent and plugins' states"
)
async def read_session(request: Request, session_id: str) -> JSONResponse:
    host = _host(request)
    live = host.live.find(_checked(session_id))
    if live is None:
        header, length = await host.catalogue.header(session_id)
        return _json(
            200,
            {
                "header": header.to_dict(),
                "live": await host.catalogue.live_elsewhere(session_id) is not None,
                "length": length,
                "agent": None,
                "plugins": await host.plugin_states(session_id),
            },
        )
    agent = host.agent(session_id)
    described = None
    if agent is not None and agent.session is live:
        described = {"root": agent.is_root, "tools": agent.tools.names()}
    return _json(
        200,
        {
            "header": live.header.to_dict(),
            "live": True,
            "length": len(live),
            "agent": described,
            "plugins": await host.plugin_states(session_id),
        },
    )


@router.patch("/sessions/{session_id}", summary="Rename a Session (a durable session/title)")
async def rename_session(request: Request, session_id: str, body: TitleBody) -> JSONResponse:
    summary = await _host(request).sessions.set_title(_checked(session_id), body.title)
    return _json(200, {"session": summary.to_dict()})


@router.delete(
    "/sessions/{session_id}",
    status_code=204,
    summary="Delete a Session: closed if live, its log moved to the trash",
)
async def delete_session(request: Request, session_id: str) -> Response:
    try:
        await _host(request).sessions.delete(_checked(session_id))
    except SessionExists as error:
        raise ApiError(409, "trash_conflict", f"{error}; restore or remove it first") from error
    web_state(request.app).hub.end_session(session_id)  # its watchers: close code 4404
    return Response(status_code=204)


@router.post(
    "/sessions/{session_id}/restore",
    summary="Bring a deleted Session back from the trash (200 {session}, cold)",
)
async def restore_session(request: Request, session_id: str) -> JSONResponse:
    try:
        summary = await _host(request).sessions.restore(_checked(session_id))
    except SessionNotFound as error:
        message = f"{error}; only a deleted Session can be restored"
        raise ApiError(404, "session_not_found", message) from error
    except SessionExists as error:
        raise ApiError(409, "session_exists", f"{error}; there is nothing to restore") from error
    return _json(200, {"session": summary.to_dict()})


@router.post("/sessions/{session_id}/cancel", summary="Stop the running turn: {cancelled: bool}")
async def cancel_turn(request: Request, session_id: str) -> JSONResponse:
    cancelled = await _host(request).sessions.cancel_turn(_checked(session_id))
    return _json(200, {"cancelled": cancelled})


@router.post("/sessions/{session_id}/resume", summary="Make a cold Session live (200)")
async def resume_session(request: Request, session_id: str) -> JSONResponse:
    host = _host(request)
    agent, _ = await host.resume(_checked(session_id))
    return _json(200, {"session": host.catalogue.summary(agent.session).to_dict()})


@router.post("/sessions/{session_id}/fork", status_code=201, summary="A new live child Session")
async def fork_session(
    request: Request, session_id: str, body: Annotated[ForkBody | None, Body()] = None
) -> JSONResponse:
    host = _host(request)
    at_seq = None if body is None else body.at_seq
    _checked(session_id)
    try:
        agent = await host.sessions.fork(session_id, at_seq)
    except ValueError as error:
        raise ApiError(422, "invalid_body", f"field 'atSeq': {error}") from error
    return _json(201, {"session": host.catalogue.summary(agent.session).to_dict()})


@router.post(
    "/sessions/{session_id}/messages",
    status_code=202,
    summary="Queue a user message (resumes a cold Session first)",
)
async def post_message(request: Request, session_id: str, body: MessageBody) -> JSONResponse:
    host = _host(request)
    posted = await host.sessions.post_message(
        _checked(session_id), body.text, time_zone=body.time_zone
    )
    if posted.agent is not None:
        summary = host.catalogue.summary(posted.agent.session)
    else:  # through the inbox of the host that owns it
        summary = await host.catalogue.stored_summary(session_id, live=True)
    return _json(202, {"queued": True, "resumed": posted.resumed, "session": summary.to_dict()})


@router.post(
    "/sessions/{session_id}/actions",
    summary="Run a plugin's action on a Session; answers once it is durable",
)
async def session_action(request: Request, session_id: str, body: ActionBody) -> JSONResponse:
    result = await _host(request).actions.run(
        _checked(session_id), body.plugin, body.action, body.args
    )
    return _json(200, {"result": result})


@router.post(
    "/sessions/{session_id}/read", summary="Mark a Session's alerts read up to a seq: {unread}"
)
async def read_alerts(request: Request, session_id: str, body: ReadBody) -> JSONResponse:
    """Every alert of the Session with a seq up to `throughSeq` is read (a mark only
    moves forward); answers once that is stored, with the Session's unread count."""
    host = _host(request)
    await host.catalogue.tail(_checked(session_id))  # SessionNotFound unless it is stored
    unread = await host.attention.read(session_id, body.through_seq)
    return _json(200, {"unread": unread})


@router.get("/sessions/{session_id}/events", summary="A page of history with durable views")
async def read_events(
    request: Request,
    session_id: str,
    from_seq: Annotated[int | None, Query(alias="from", ge=0)] = None,
    before: Annotated[int | None, Query(ge=0)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
) -> JSONResponse:
    state = web_state(request.app)
    _checked(session_id)
    if from_seq is not None and before is not None:
        raise ApiError(422, "invalid_query", "use either 'from' or 'before', not both")
    page = await state.history.page(
        session_id, PageRequest(from_seq=from_seq, before=before, limit=limit)
    )
    return _json(200, page)


@router.get("/client-modules", summary="Browser modules shipped by loaded plugins")
async def client_modules(request: Request) -> JSONResponse:
    modules = [
        {
            "plugin": published.plugin,
            "url": module_url(published.plugin, published.module.path.name),
            "eventTypes": list(published.module.event_types),
        }
        for published in _host(request).contributions.client_modules()
    ]
    return _json(200, {"modules": modules})
