"""The dashboard's icon: at /favicon.ico for anyone (browsers ask for it on pages that name no icon, before
anyone has logged in), and named by every page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_serves_favicon_ico_without_a_login() -> None:
    response = Client().get("/favicon.ico", follow=True)
    assert response.status_code == 200
    assert [url for url, _ in response.redirect_chain] == ["/static/dradash/favicon.svg"]
    assert response["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(response.streaming_content)


def test_it_names_the_icon_on_the_pages() -> None:
    page = Client().get("/accounts/login/").content.decode()
    (href,) = re.findall(r'<link rel="icon"[^>]* href="([^"]+)"', page)
    assert Client().get(href).status_code == 200
