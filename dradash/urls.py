from csp.decorators import csp_update
from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.decorators.cache import cache_control
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from dradash import health, metrics, views
from dradash.api_schema import SchemaView

#: the doc pages are read only (their OPTIONS answer had no template to render: a 500)
READ = ["get", "head"]
#: Swagger UI and ReDoc style themselves inline (ReDoc with styled-components, its search in a blob:
#: worker); their scripts still come only from the vendored sidecar ('self').
DOC_VIEWER_CSP = csp_update({"style-src": ["'unsafe-inline'"], "worker-src": ["'self'", "blob:"]})

#: Browsers ask for /favicon.ico on a page that names no icon (a JSON answer, the admin, ReDoc), logged in or
#: not: the dashboard's icon, not a 404 in their console. A temporary redirect, kept a day.
FAVICON = cache_control(max_age=86400)(
    RedirectView.as_view(url=static("dradash/favicon.svg"), http_method_names=READ)
)

handler404 = "dradash.api_errors.api_not_found"
handler500 = "dradash.api_errors.api_server_error"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("favicon.ico", FAVICON, name="favicon"),
    path("admin/", admin.site.urls),
    # Only the methods a form uses: Django's LoginView would answer a PUT like a POST.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(http_method_names=["get", "head", "post"]),
        name="login",
    ),
    path("accounts/logout/", views.LogoutView.as_view(), name="logout"),
    path("accounts/tokens/", views.tokens, name="tokens"),
    path("accounts/tokens/<int:token_id>/revoke/", views.token_revoke, name="token-revoke"),
    path("accounts/tokens/legacy/revoke/", views.legacy_token_revoke_view, name="legacy-token-revoke"),
    # The schema needs an authenticated API client (401 otherwise); the two viewers are pages and send
    # an anonymous browser to the login page. Both load their assets from the vendored sidecar package.
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        DOC_VIEWER_CSP(
            login_required(
                SpectacularSwaggerSplitView.as_view(
                    url_name="api-schema", http_method_names=READ, template_name="dradash/api_docs.html"
                )
            )
        ),
        name="api-docs",
    ),
    path(
        "api/redoc/",
        DOC_VIEWER_CSP(
            login_required(SpectacularRedocView.as_view(url_name="api-schema", http_method_names=READ))
        ),
        name="api-redoc",
    ),
    *([path("oidc/", include("mozilla_django_oidc.urls"))] if settings.DRADASH_OIDC_ENABLED else []),
    path("api/", include("inventory.api.urls")),
    path("", include("inventory.urls")),
    path("", include("allocation.urls")),
    path("", include("maintenance.urls")),
    path("", include("migration.urls")),
]
