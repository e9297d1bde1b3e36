from django.urls import path

from allocation.consumers import WhatIfRunConsumer

websocket_urlpatterns = [
    path("ws/whatif/<uuid:run_id>/", WhatIfRunConsumer.as_asgi()),
]
