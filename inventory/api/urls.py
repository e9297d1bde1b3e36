"""Read API routes; dradash/urls.py mounts them with path("api/", include("inventory.api.urls")).

No format-suffix routes (`/api/classes.json`): every answer is JSON already, and the suffix forms broke
views that take no `format` argument. A suffix is an unknown path: 404.
"""

from typing import Any

from django.urls import NoReverseMatch, path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.routers import APIRootView, DefaultRouter

from inventory.api import views

#: The other rooms' entry points, by URL name (reversed, not imported: inventory is below them; a room
#: that is not installed is left out). The API root lists them beside the inventory's.
OTHER_ROOMS = {
    "whatif-runs": "allocation:whatif-run-list",
    "maintenance": "maintenance:api-list",
    "maintenance-audit": "maintenance:api-audit",
    "maintenance-audit-csv": "maintenance:api-audit-csv",
    "migration-upgrade": "migration:api-upgrade",
    "migration-device-plugins": "migration:api-device-plugins",
    "migration-pool-status": "migration:api-pool-status",
    "schema": "api-schema",
    "docs": "api-docs",
    "redoc": "api-redoc",
}


class APIRoot(APIRootView):
    """The API root: every room's endpoints (the inventory's lists, then what-if, maintenance, migration,
    and the OpenAPI schema with its two viewers)."""

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().get(request, *args, **kwargs)
        for key, name in OTHER_ROOMS.items():
            try:
                response.data[key] = reverse(name, request=request, format=kwargs.get("format"))
            except NoReverseMatch:
                continue
        return response


class Router(DefaultRouter):
    include_format_suffixes = False
    APIRootView = APIRoot


router = Router()
router.register("devices", views.DeviceViewSet, basename="device")
router.register("pools", views.PoolViewSet, basename="pool")
router.register("claims", views.ClaimViewSet, basename="claim")
router.register("pods", views.PodViewSet, basename="pod")
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
