"""The base of every JSON websocket here: a frame the client sends that is not a JSON text is answered
with an error message, not a traceback and an abnormal close (channels' own consumer raises on it); a
database that does not answer closes the socket with 1013 "try again later", so the page says it is not
live and reconnects (and is then told the current state), instead of staying open without the change."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db import InterfaceError, OperationalError

log = logging.getLogger(__name__)

#: a client sent something this socket cannot read (4400: the websocket twin of HTTP 400)
CLOSE_BAD_REQUEST = 4400
#: the server cannot serve this socket now (the database does not answer): RFC 6455's "Try Again Later"
CLOSE_TRY_AGAIN = 1013


class JsonSocket(AsyncJsonWebsocketConsumer):
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
