"""Every REST endpoint: 401 with WWW-Authenticate, capped and checked paging, JSON errors, no 5xx from input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


@pytest.fixture
def api() -> Client:
    user = User.objects.create_user("ada", password="correct-horse-battery-staple-7")
    token = Token.objects.create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


def test_it_answers_a_bad_token_with_401_and_www_authenticate() -> None:
    response = Client(HTTP_AUTHORIZATION="Token not-a-token").get("/api/devices/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["errors"][0]["message"]


def test_it_asks_anonymous_clients_to_authenticate_for_the_schema() -> None:
    response = Client().get("/api/schema/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_it_sends_anonymous_browsers_from_the_api_docs_to_the_login_page() -> None:
    for path in ("/api/docs/", "/api/redoc/"):
        response = Client().get(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_it_serves_the_api_docs_from_vendored_assets(api: Client) -> None:
    client = Client()
    client.force_login(User.objects.get(username="ada"))
    page = client.get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in page
    assert "cdn" not in page.lower() and "unpkg" not in page.lower()
    assert client.get("/api/docs/?script=").status_code == 200  # the split view's script, not inline
    redoc = client.get("/api/redoc/").content.decode()
    assert "/static/drf_spectacular_sidecar/redoc/" in redoc


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=100000000000000000000", "limit"),
        ("limit=-1", "limit"),
        ("limit=abc", "limit"),
        ("limit=0", "limit"),
        ("offset=100000000000000000000", "offset"),
        ("offset=-5", "offset"),
    ],
)
def test_it_refuses_out_of_range_paging_with_400_naming_the_parameter(
    api: Client, query: str, field: str
) -> None:
    response = api.get(f"/api/devices/?{query}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_the_limit_names_one_lower_bound_whether_it_is_zero_or_negative(api: Client) -> None:
    for query, message in (("limit=-1", "must be at least 1, got -1"), ("limit=0", "must be at least 1, got 0"),
                           ("offset=-5", "must not be negative, got -5")):  # fmt: skip
        assert api.get(f"/api/devices/?{query}").json()["errors"][0]["message"] == message


def test_it_caps_the_page_size(api: Client) -> None:
    response = api.get("/api/devices/?limit=1000")
    assert response.status_code == 200
    assert set(response.json()) >= {"count", "next", "previous", "results"}


def test_it_refuses_deeply_nested_json_with_400(api: Client) -> None:
    body = "[" * 5000 + "]" * 5000
    response = api.post("/api/whatif/runs/", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]
    deeper_than_allowed = json.dumps(json.loads("[" * 70 + "]" * 70))
    response = api.post("/api/whatif/runs/", deeper_than_allowed, content_type="application/json")
    assert response.status_code == 400 and "nested" in response.json()["detail"]


def test_it_answers_an_oversized_body_on_the_api_with_a_json_413(api: Client, settings) -> None:
    body = json.dumps({"yaml": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)})
    response = api.post("/api/maintenance/", body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["errors"][0]["field"] == "body"


def test_it_generates_a_schema_without_warnings(tmp_path) -> None:
    from django.core.management import call_command

    # drf-spectacular's own check: an endpoint it cannot describe, an enum name collision or a duplicate
    # operation id fails here, as `manage.py spectacular --validate --fail-on-warn` would.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"))
    assert "/api/devices/{driver}/{pool}/{name}/" in (tmp_path / "schema.yaml").read_text()


def test_the_api_docs_link_back_to_the_dashboard_in_its_theme(api: Client) -> None:
    client = Client()
    client.force_login(User.objects.get(username="ada"))
    page = client.get("/api/docs/").content.decode()
    assert '<a href="/" id="back-to-dashboard">' in page
    assert "/static/dradash/theme.js" in page and "/static/dradash/api_docs.css" in page
    assert "<style" not in page and re.search(r"<script>(?!</script>)", page) is None  # no inline code
    css = (Path(settings.BASE_DIR) / "static" / "dradash" / "api_docs.css").read_text()
    assert ':root[data-theme="dark"] #swagger-ui' in css
