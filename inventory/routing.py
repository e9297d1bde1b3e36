from django.urls import path

from inventory.consumers import InventoryConsumer, InventoryStreamConsumer

websocket_urlpatterns = [
    path("ws/inventory/", InventoryConsumer.as_asgi()),
    path("ws/api/inventory/", InventoryStreamConsumer.as_asgi()),
]
