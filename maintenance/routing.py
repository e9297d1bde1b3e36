from django.urls import path

from maintenance.consumers import MaintenanceProgressConsumer

websocket_urlpatterns = [
    path("ws/maintenance/<str:maintenance_id>/", MaintenanceProgressConsumer.as_asgi()),
]
