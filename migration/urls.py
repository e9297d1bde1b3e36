from django.urls import include, path

from migration import views

app_name = "migration"

urlpatterns = [
    path("migration/", views.index, name="migration-index"),
    path("migration/upgrade/", views.upgrade, name="migration-upgrade"),
    path("migration/device-plugins/", views.device_plugins, name="migration-device-plugins"),
    path("migration/pool-status/", views.pool_status, name="migration-pool-status"),
    path("api/migration/", include("migration.api")),
]
