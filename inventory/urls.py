from django.urls import path

from inventory import views

app_name = "inventory"

urlpatterns = [
    path("", views.overview, name="overview"),
    path("live/state/", views.live_state, name="live-state"),
    path("live/status-banner/", views.status_banner, name="status-banner"),
    path("devices/", views.devices, name="devices"),
    path("devices/data/", views.devices_data, name="devices-data"),
    path("devices/export.csv", views.devices_export_csv, name="devices-export-csv"),
    path("devices/export.json", views.devices_export_json, name="devices-export-json"),
    # Pool names may contain "/", so the pool is a path segment group; the device name never does.
    path("devices/<str:driver>/<path:pool>/<str:name>/", views.device_detail, name="device-detail"),
    path("claims/", views.claims, name="claims"),
    path("claims/<str:namespace>/<str:name>/", views.claim_detail, name="claim-detail"),
    path("classes/", views.classes, name="classes"),
    path("taint-rules/", views.taint_rules, name="taint-rules"),
    path("taint-rules/<str:name>/", views.taint_rule_detail, name="taint-rule-detail"),
    path("nodes/", views.nodes, name="nodes"),
    path("nodes/<str:name>/", views.node_detail, name="node-detail"),
    path("pods/", views.pods, name="pods"),
    path("pods/<str:namespace>/<str:name>/", views.pod_detail, name="pod-detail"),
    path("search/", views.search, name="search"),
    path("objects/<str:kind>/<str:uid>/yaml/", views.object_yaml, name="object-yaml"),
]
