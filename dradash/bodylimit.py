"""The HTTP body's size, checked as it arrives, before Django spools it.

Django's ASGI handler reads a whole body into a temporary file before any middleware runs, and a body
sent chunked (no Content-Length) then looks empty to DRF, which trusts the header. This layer sits in
front: a declared body over the hard cap is refused unread; a chunked one is read here up to the cap
and handed on with the Content-Length it turned out to have, so every later check (the API's JSON 413,
the what-if form's own limit) and every parser sees it as if it had been declared."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from dradash.api import error_body

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodySizeGuard:
    def __init__(self, app: App, *, max_bytes: Callable[[], int]) -> None:
        self.app = app
        self.max_bytes = max_bytes  # read per request: settings may change under tests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes()
        declared = _declared_length(scope)
        if declared is not None:
            if declared > limit:
                await _refuse(scope, send, f"the request body has {declared} bytes", limit)
                return
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _refuse(scope, send, f"the request body is over {limit} bytes", limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:  # a GET, say, has none: it stays as it came
            headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"transfer-encoding"]
            scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        await self.app(scope, _replay(body, receive), send)


def _declared_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", []):
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server refuses a malformed length before it reaches us
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: the disconnect, when it comes

    return replay


async def _refuse(scope: Scope, send: Send, what: str, limit: int) -> None:
    message = f"{what}, more than the {limit} bytes this server reads of any request"
    if scope["path"].startswith("/api/"):
        payload = error_body([{"field": "body", "message": message}])
        body, content_type = json.dumps(payload).encode(), b"application/json"
    else:
        body, content_type = f"Request body too large: {message}\n".encode(), b"text/plain; charset=utf-8"
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    # The client may still be sending: close the connection rather than read what we refuse.
    headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})
