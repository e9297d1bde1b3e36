from django.urls import include, path

from migration import views

app_name = "migration"

urlpatterns = [
    path("migration/", views.index, name="migration-index"),
    path("migration/upgrade/", views.upgrade, name="migration-upgrade"),
    path("api/migration/", include("migration.api")),
]
