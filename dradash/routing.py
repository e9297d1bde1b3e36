"""Websocket routes of every app, gathered in one place."""

from allocation.routing import websocket_urlpatterns as allocation_ws
from inventory.routing import websocket_urlpatterns as inventory_ws
from maintenance.routing import websocket_urlpatterns as maintenance_ws

websocket_urlpatterns = [*inventory_ws, *allocation_ws, *maintenance_ws]
