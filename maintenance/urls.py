from django.urls import include, path

from maintenance import views

app_name = "maintenance"

urlpatterns = [
    path("maintenance/", views.index, name="index"),
    path("maintenance/new/", views.new, name="new"),
    path("maintenance/audit/", views.audit, name="audit"),
    path("maintenance/audit/version.json", views.audit_version, name="audit-version"),
    path("maintenance/<str:maintenance_id>/", views.detail, name="detail"),
    path("maintenance/<str:maintenance_id>/rules.yaml", views.rules_yaml, name="rules-yaml"),
    path("maintenance/<str:maintenance_id>/preview/", views.preview, name="preview"),
    path("maintenance/<str:maintenance_id>/apply/", views.apply, name="apply"),
    path("maintenance/<str:maintenance_id>/undo/", views.undo, name="undo"),
    path(
        "maintenance/<str:maintenance_id>/remove-leftovers/", views.remove_leftovers, name="remove-leftovers"
    ),
    path("maintenance/<str:maintenance_id>/pause/", views.drain_pause, name="drain-pause"),
    path("maintenance/<str:maintenance_id>/resume/", views.drain_resume, name="drain-resume"),
    path("maintenance/<str:maintenance_id>/abort/", views.drain_abort, name="drain-abort"),
    path("maintenance/<str:maintenance_id>/progress.json", views.progress_json, name="progress-json"),
    path("api/maintenance/", include("maintenance.api")),
]
