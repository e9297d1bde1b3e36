from rest_framework.routers import SimpleRouter

from allocation.api.views import WhatIfRunViewSet

router = SimpleRouter()
router.register("api/whatif/runs", WhatIfRunViewSet, basename="whatif-run")
urlpatterns = router.urls
