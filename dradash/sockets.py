"""The base of every JSON websocket here: a frame the client sends that is not a JSON text is answered
with an error message, not a traceback and an abnormal close (channels' own consumer raises on it); a
database that does not answer closes the socket with 1013 "try again later", so the page says it is not
live and reconnects (and is then told the current state), instead of staying open without the change.

A socket lives at most `DRADASH_SOCKET_MAX_SECONDS` (12 h, less up to a tenth at random so that pages opened
together do not come back together): then it is closed with 1012 "service restart" and the page reconnects.
Channel layers forget a group's members after a day (`group_expiry`, channels_redis's and the in-memory
layer's), so a page left open on a wall screen for longer stopped hearing changes while it said it was live.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import InterfaceError, OperationalError

log = logging.getLogger(__name__)

#: a client sent something this socket cannot read (4400: the websocket twin of HTTP 400)
CLOSE_BAD_REQUEST = 4400
#: the server cannot serve this socket now (the database does not answer): RFC 6455's "Try Again Later"
CLOSE_TRY_AGAIN = 1013
#: the socket reached its lifetime: reconnect (RFC 6455's "Service Restart")
CLOSE_RECYCLED = 1012


class JsonSocket(AsyncJsonWebsocketConsumer):
    _recycle: asyncio.Task[None] | None = None

    async def websocket_connect(self, message: dict[str, Any]) -> None:
        await super().websocket_connect(message)
        lifetime = settings.DRADASH_SOCKET_MAX_SECONDS
        if lifetime:
            self._recycle = asyncio.create_task(self._close_after(lifetime * random.uniform(0.9, 1.0)))

    async def websocket_disconnect(self, message: dict[str, Any]) -> None:
        if self._recycle is not None:
            self._recycle.cancel()
        await super().websocket_disconnect(message)

    async def _close_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        log.info("closing a %s socket after %.0f s: the page reconnects", type(self).__name__, seconds)
        await self.close(code=CLOSE_RECYCLED)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if text_data is None:
            await self.send_error("frames must be JSON text, not binary")
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            await self.send_error("frames must be JSON text")
            return
        await self.receive_json(content, **kwargs)

    async def send_error(self, message: str) -> None:
        await self.send_json({"type": "error", "message": message})

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Every handler (connect, a group's event): a database that does not answer closes the socket."""
        await self.or_close(super().dispatch(message))

    async def or_close(self, work: Awaitable[None]) -> None:
        """Await `work` (a handler, or a push of a socket's own task); if the database does not answer,
        close with CLOSE_TRY_AGAIN: what the push was to tell the page would otherwise be lost while the
        page goes on saying it is live. The page reconnects and is told the state then."""
        try:
            await work
        except (OperationalError, InterfaceError) as exc:
            log.warning("closing a %s socket: the database is unavailable: %s", type(self).__name__, exc)
            await self.close(code=CLOSE_TRY_AGAIN)
