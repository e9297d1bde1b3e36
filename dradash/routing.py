"""Websocket routes of every app, gathered in one place; any other path is closed cleanly."""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import re_path

from allocation.routing import websocket_urlpatterns as allocation_ws
from inventory.routing import websocket_urlpatterns as inventory_ws
from maintenance.routing import websocket_urlpatterns as maintenance_ws

#: close code for "no such stream" (4000-4999 are the application's own)
UNKNOWN_PATH = 4404


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """No stream lives here: refuse the handshake instead of failing with an HTTP 500."""

    async def connect(self) -> None:
        await self.close(code=UNKNOWN_PATH)


websocket_urlpatterns = [
    *inventory_ws,
    *allocation_ws,
    *maintenance_ws,
    re_path(r"^", UnknownPathConsumer.as_asgi()),
]
