from django.urls import path

from maintenance.consumers import AuditConsumer, MaintenanceProgressConsumer

websocket_urlpatterns = [
    path("ws/maintenance-audit/", AuditConsumer.as_asgi()),
    path("ws/maintenance/<str:maintenance_id>/", MaintenanceProgressConsumer.as_asgi()),
]
