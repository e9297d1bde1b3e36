from django.urls import include, path

from allocation import views

app_name = "allocation"

urlpatterns = [
    # Listed twice: "whatif" first so the nav highlights the page, "index" for base.html's link.
    path("whatif/", views.whatif_index, name="whatif"),
    path("whatif/", views.whatif_index, name="index"),
    path("whatif/<uuid:run_id>/", views.whatif_run, name="whatif-run"),
    path("whatif/<uuid:run_id>/status/", views.whatif_run_status, name="whatif-run-status"),
    path("whatif/<uuid:run_id>/cancel/", views.whatif_run_cancel_view, name="whatif-run-cancel"),
    path("", include("allocation.api.urls")),
]
