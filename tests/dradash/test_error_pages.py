"""Error pages a person reads: inside the app (nav, stylesheet), saying what happened and, for 403, which
role is needed — not Django's bare "403 Forbidden"."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import bad_request, server_error

from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


def test_a_viewer_refused_a_page_gets_the_app_and_the_role_it_needs(client: Client) -> None:
    client.force_login(make_user("vic", role="viewer"))
    response = client.get("/maintenance/new/")
    assert response.status_code == 403
    html = response.content.decode()
    assert 'id="main-nav"' in html and "dradash/dradash.css" in html
    assert "Only operators and admins may change a maintenance" in html
    assert "with the role <b>viewer</b>" in html
    assert "<style" not in html and "style=" not in html


def test_a_missing_page_is_a_404_inside_the_app(client: Client) -> None:
    client.force_login(make_user())
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'id="main-nav"' in html and "<h1>Not found</h1>" in html and "/no-such-page/" in html
    api = client.get("/api/no-such-endpoint/")
    assert api.status_code == 404 and api["Content-Type"].startswith("application/json")


def test_400_and_500_pages_are_the_apps_without_a_request_context() -> None:
    request = RequestFactory().get("/")
    for view, status, words in ((server_error, 500, "went wrong"), (bad_request, 400, "Bad request")):
        response = view(request) if view is server_error else view(request, Exception("bad"))
        assert response.status_code == status
        html = response.content.decode()
        assert words in html and "dradash/dradash.css" in html and 'class="brand"' in html
