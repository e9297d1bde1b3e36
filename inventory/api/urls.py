"""Read API routes; dradash/urls.py mounts them with path("api/", include("inventory.api.urls")).

No format-suffix routes (`/api/classes.json`): every answer is JSON already, and the suffix forms broke
views that take no `format` argument. A suffix is an unknown path: 404.
"""

from django.urls import path
from rest_framework.routers import DefaultRouter

from inventory.api import views


class Router(DefaultRouter):
    include_format_suffixes = False


router = Router()
router.register("devices", views.DeviceViewSet, basename="device")
router.register("pools", views.PoolViewSet, basename="pool")
router.register("claims", views.ClaimViewSet, basename="claim")
router.register("classes", views.DeviceClassViewSet, basename="deviceclass")
router.register("taint-rules", views.TaintRuleViewSet, basename="taintrule")
router.register("nodes", views.NodeViewSet, basename="node")
router.register("watch-health", views.WatchStateViewSet, basename="watchstate")
router.register("objects", views.KubeObjectViewSet, basename="kubeobject")
router.register("search", views.SearchView, basename="search")

app_name = "inventory-api"
urlpatterns = [
    *router.urls,
    # A device by identity. Pool names may contain "/", so the pool is a path group between the driver
    # (a DNS subdomain) and the device name (a DNS label), neither of which can hold "/".
    path(
        "devices/<str:driver>/<path:pool>/<str:name>/",
        views.DeviceViewSet.as_view({"get": "by_path"}),
        name="device-by-path",
    ),
]
