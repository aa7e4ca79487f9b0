"""The request body limit (DESIGN §9: bodies over 1 MiB get 413, configurable).

A message's body has its own, larger limit (`settings.MESSAGE_BODY_BYTES`): the
documented limit of a message is its text's (`MAX_TEXT_BYTES`, 1 MiB of
UTF-8), and that text arrives as a JSON string inside an object. JSON may
escape one byte of text into six (`\u0001`; `\n` is two, `é` sent as
`\u00e9` three), so a text of exactly the limit needs up to six times its
size plus room for the rest of the object. Without this, a message of exactly
1 MiB could never be posted (issue 35). Only a client holding the token gets
this far (`AccessGuard` runs first), and the text limit is checked once the
body is parsed (422 naming it).

`BodyLimit` reads an HTTP request's body itself, counting bytes as they
arrive, and answers 413 `body_too_large` as soon as the count passes the
limit: a declared `Content-Length` is only an early exit, because a chunked
body declares nothing. A body within the limit is replayed to the app
unchanged. API bodies are small JSON documents, so holding one in memory is
the cheap way to guarantee the app never sees an oversized one.
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..base.limits import MAX_TEXT_BYTES
from .errors import error_response
from .settings import MESSAGE_BODY_BYTES

__all__ = ["BodyLimit"]

_MESSAGES = re.compile(r"/api/sessions/[^/]+/messages")


class BodyLimit:
    """ASGI middleware: refuse HTTP request bodies longer than their route's limit.

    A message (`POST /api/sessions/{id}/messages`) may be `message_bytes`
    long, any other body `max_bytes`.
    """

    def __init__(
        self, app: ASGIApp, max_bytes: int, message_bytes: int = MESSAGE_BODY_BYTES
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.message_bytes = message_bytes

    def _limit(self, scope: Scope) -> int:
        if scope.get("method") == "POST" and _MESSAGES.fullmatch(scope.get("path", "")):
            return self.message_bytes
        return self.max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit(scope)
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await self._refuse(scope, receive, send, limit)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before sending its body: nobody to answer
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._refuse(scope, receive, send, limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        message = f"the request body is larger than the limit of {limit:,} bytes"
        if limit == self.message_bytes and limit != self.max_bytes:
            message += f" for a message (its text may be {MAX_TEXT_BYTES:,} bytes of UTF-8)"
        response = error_response(413, "body_too_large", message, headers={"Connection": "close"})
        await response(scope, receive, send)
