"""The base of every JSON websocket here: a frame the client sends that is not a JSON text is answered
with an error message, not a traceback and an abnormal close (channels' own consumer raises on it)."""

from __future__ import annotations

import json
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

#: a client sent something this socket cannot read (4400: the websocket twin of HTTP 400)
CLOSE_BAD_REQUEST = 4400


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
