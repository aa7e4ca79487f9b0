"""The request body limit (DESIGN §9: bodies over 1 MiB get 413, configurable).

`BodyLimit` reads an HTTP request's body itself, counting bytes as they
arrive, and answers 413 `body_too_large` as soon as the count passes the
limit: a declared `Content-Length` is only an early exit, because a chunked
body declares nothing. A body within the limit is replayed to the app
unchanged. API bodies are small JSON documents, so holding one in memory is
the cheap way to guarantee the app never sees an oversized one.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import error_response

__all__ = ["BodyLimit"]


class BodyLimit:
    """ASGI middleware: refuse HTTP request bodies longer than `max_bytes`."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client left before sending its body: nobody to answer
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(scope, receive, send)
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

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413,
            "body_too_large",
            f"the request body is larger than the limit of {self.max_bytes} bytes",
            headers={"Connection": "close"},
        )
        await response(scope, receive, send)
