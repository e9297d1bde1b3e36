from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from dradash import health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The schema needs an authenticated API client (401 otherwise); the two viewers are pages and send
    # an anonymous browser to the login page. Both load their assets from the vendored sidecar package.
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        login_required(SpectacularSwaggerSplitView.as_view(url_name="api-schema")),
        name="api-docs",
    ),
    path("api/redoc/", login_required(SpectacularRedocView.as_view(url_name="api-schema")), name="api-redoc"),
    *([path("oidc/", include("mozilla_django_oidc.urls"))] if settings.DRADASH_OIDC_ENABLED else []),
    path("api/", include("inventory.api.urls")),
    path("", include("inventory.urls")),
    path("", include("allocation.urls")),
    path("", include("maintenance.urls")),
    path("", include("migration.urls")),
]
