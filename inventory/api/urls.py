"""Read API routes; dradash/urls.py mounts them with path("api/", include("inventory.api.urls"))."""

from rest_framework.routers import DefaultRouter

from inventory.api import views

router = DefaultRouter()
router.register("devices", views.DeviceViewSet, basename="device")
router.register("pools", views.PoolViewSet, basename="pool")
router.register("claims", views.ClaimViewSet, basename="claim")
router.register("classes", views.DeviceClassViewSet, basename="deviceclass")
router.register("taint-rules", views.TaintRuleViewSet, basename="taintrule")
router.register("nodes", views.NodeViewSet, basename="node")
router.register("watch-health", views.WatchStateViewSet, basename="watchstate")
router.register("objects", views.KubeObjectViewSet, basename="kubeobject")

app_name = "inventory-api"
urlpatterns = router.urls
