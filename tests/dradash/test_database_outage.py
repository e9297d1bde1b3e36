"""PostgreSQL going away while the dashboard serves (a restart, a failover, a network cut): pages and API
calls over a real HTTP connection get a 503 that says the database is unavailable — a page inside the app,
the API's JSON envelope — not the generic "something went wrong" 500; and they serve again once it is back."""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import pytest
from django.test import Client

from tests.faults import database_through_cut
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def session_cookie() -> str:
    client = Client()
    client.force_login(make_user("ada", role="operator"))
    return f"sessionid={client.cookies['sessionid'].value}"


def get(server: str, path: str, cookie: str) -> tuple[int, dict[str, str], str]:
    parts = urlsplit(server)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    connection.request("GET", path, headers={"Cookie": cookie})
    response = connection.getresponse()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode()


@pytest.mark.parametrize("path", ["/", "/devices/", "/maintenance/", "/whatif/"])
def test_a_page_asked_for_while_the_database_is_down_says_so_with_a_503(asgi_server: str, path: str) -> None:
    cookie = session_cookie()
    with database_through_cut() as cut:
        assert get(asgi_server, path, cookie)[0] == 200
        cut.cut()
        status, headers, html = get(asgi_server, path, cookie)
        assert status == 503, html[:300]
        assert headers["content-type"].startswith("text/html")
        assert 'data-status="503"' in html and "database" in html.lower()
        assert "Something went wrong" not in html
        assert "Retry-After".lower() in headers
        cut.restore()
        assert get(asgi_server, path, cookie)[0] == 200


@pytest.mark.parametrize("path", ["/api/devices/", "/api/whatif/runs/", "/api/maintenance/"])
def test_an_api_call_made_while_the_database_is_down_is_a_503_in_the_api_envelope(
    asgi_server: str, path: str
) -> None:
    cookie = session_cookie()
    with database_through_cut() as cut:
        assert get(asgi_server, path, cookie)[0] == 200
        cut.cut()
        status, headers, text = get(asgi_server, path, cookie)
        assert status == 503, text[:300]
        assert headers["content-type"].startswith("application/json")
        body = json.loads(text)
        assert "database" in body["errors"][0]["message"] and "internal error" not in text
        # how old the data is cannot be known without the database: never "synced"
        assert headers.get("x-dradash-data-synced") == "false"
        cut.restore()
        status, headers, _ = get(asgi_server, path, cookie)
        assert status == 200 and headers.get("x-dradash-data-synced") in {"true", "false"}


def test_only_a_read_met_by_a_database_outage_is_said_to_have_changed_nothing(asgi_server: str) -> None:
    """A write may have reached the cluster before the database went (a DeviceTaintRule created, its record
    not written): its 503 tells the user to look before repeating it, not that nothing changed."""
    cookie = session_cookie()
    parts = urlsplit(asgi_server)
    with database_through_cut() as cut:
        cut.cut()
        _, _, read = get(asgi_server, "/api/maintenance/", cookie)
        assert "nothing was changed" in json.loads(read)["errors"][0]["message"]
        connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
        connection.request(
            "POST",
            "/api/maintenance/",
            body="{}",
            headers={"Cookie": cookie, "Content-Type": "application/json"},
        )
        response = connection.getresponse()
        message = json.loads(response.read())["errors"][0]["message"]
        assert response.status == 503
        assert "nothing was changed" not in message and "look before repeating it" in message
