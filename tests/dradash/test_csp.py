"""A strict Content-Security-Policy on every page: nothing inline is allowed, so nothing inline is written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
#: a <script> element with a body (one with src= and nothing inside is fine)
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.IGNORECASE | re.DOTALL)
STYLE_ATTR = re.compile(r"<[a-z][^>]*\sstyle\s*=", re.IGNORECASE | re.DOTALL)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.IGNORECASE)
JS_URL = re.compile(r"""(?:href|src|action)\s*=\s*["']?\s*javascript:""", re.IGNORECASE)
MAIN_PAGES = [
    "/", "/devices/", "/claims/", "/pods/", "/classes/", "/taint-rules/", "/nodes/", "/whatif/", "/maintenance/",
    "/maintenance/new/", "/maintenance/audit/", "/migration/upgrade/", "/accounts/tokens/",
]  # fmt: skip


def policy(response: object) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]  # type: ignore[index]
    parts = [p.strip().split() for p in header.split(";") if p.strip()]
    return {p[0]: p[1:] for p in parts}


@pytest.fixture
def client_as_operator() -> Client:
    user = User.objects.create_user("olga")
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    client = Client()
    client.force_login(user)
    return client


def test_it_sends_the_policy_on_the_login_page() -> None:
    response = Client().get("/accounts/login/")
    assert response.status_code == 200
    p = policy(response)
    assert p["script-src"] == ["'self'"]
    assert p["style-src"] == ["'self'"]
    assert p["img-src"] == ["'self'", "data:"]
    assert p["frame-ancestors"] == ["'none'"]
    assert p["object-src"] == ["'none'"]
    assert p["base-uri"] == ["'self'"]
    assert p["form-action"] == ["'self'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]


def test_it_allows_the_pages_own_websocket_origin_only() -> None:
    response = Client(HTTP_HOST="dash.example.com").get("/accounts/login/", HTTP_HOST="localhost")
    assert policy(response)["connect-src"] == ["'self'", "ws://localhost", "wss://localhost"]


@pytest.mark.parametrize("url", MAIN_PAGES)
def test_it_sends_the_policy_on_every_main_page(client_as_operator: Client, url: str) -> None:
    response = client_as_operator.get(url)
    assert response.status_code == 200, url
    assert policy(response)["script-src"] == ["'self'"], url
    assert "'unsafe-inline'" not in response["Content-Security-Policy"], url


def test_it_sends_the_policy_on_api_responses(client_as_operator: Client) -> None:
    response = client_as_operator.get("/api/devices/")
    assert "default-src 'self'" in response["Content-Security-Policy"]


def test_it_relaxes_only_styles_for_the_vendored_api_doc_viewers(client_as_operator: Client) -> None:
    for url in ("/api/docs/", "/api/redoc/"):
        response = client_as_operator.get(url)
        assert response.status_code == 200
        p = policy(response)
        assert p["script-src"] == ["'self'"], url
        assert "'unsafe-inline'" in p["style-src"], url


def test_it_writes_nothing_inline_in_any_template() -> None:
    found: list[str] = []
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = path.read_text()
        for name, rule in (("inline <script>", INLINE_SCRIPT), ("on*= handler", HANDLER),
                           ("style= attribute", STYLE_ATTR), ("<style> element", STYLE_ELEMENT),
                           ("javascript: URL", JS_URL)):  # fmt: skip
            for match in rule.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(TEMPLATES)}:{line}: {name}")
    assert found == []


def test_the_scan_finds_what_it_looks_for() -> None:
    assert INLINE_SCRIPT.search("<script>alert(1)</script>")
    assert not INLINE_SCRIPT.search('<script src="/static/x.js" defer></script>')
    assert HANDLER.search('<button type="button"\n onclick="x()">')
    assert not HANDLER.search('<button data-on="x">')
    assert STYLE_ATTR.search('<div class="a" style="width:1px">')
    assert JS_URL.search('<a href="javascript:void(0)">')
