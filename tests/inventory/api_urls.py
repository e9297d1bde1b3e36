"""URLconf for the API tests: the read API mounted where dradash/urls.py mounts it."""

from django.urls import include, path

urlpatterns = [path("api/", include("inventory.api.urls"))]
