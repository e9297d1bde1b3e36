"""The Devices table's data endpoint and its exports refuse a parameter that is not a filter, as the Devices
page does (a misspelt `?nod=` exported every device); so does the Nodes page, whose filter is `q`."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.inventory.pages_support import make_user, small_world

pytestmark = pytest.mark.django_db

DEVICE_ENDPOINTS = ["inventory:devices-data", "inventory:devices-export-csv", "inventory:devices-export-json"]


@pytest.fixture
def client_in(client: Client) -> Client:
    small_world()
    client.force_login(make_user())
    return client


@pytest.mark.parametrize("endpoint", DEVICE_ENDPOINTS)
def test_it_refuses_a_misspelt_filter_on_the_devices_data_and_exports_naming_it(
    client_in: Client, endpoint: str
) -> None:
    response = client_in.get(reverse(endpoint), {"nod": "node-1", "sort": "pool", "dir": "desc"})
    assert response.status_code == 400, response.content[:200]
    errors = response.json()["errors"]
    assert list(errors) == ["nod"], errors
    assert errors["nod"][0]["message"].startswith(
        "not a filter of this page; its filters are driver, pool, node"
    )


@pytest.mark.parametrize("endpoint", DEVICE_ENDPOINTS)
def test_it_still_answers_the_devices_data_and_exports_with_filters_paging_and_sort(
    client_in: Client, endpoint: str
) -> None:
    params = {"node": "node-1", "sort": "device", "dir": "desc", "page": "1", "size": "50"}
    assert client_in.get(reverse(endpoint), params).status_code == 200


@pytest.mark.parametrize("endpoint", DEVICE_ENDPOINTS)
def test_it_names_a_refused_filter_value_on_the_devices_data_and_exports(
    client_in: Client, endpoint: str
) -> None:
    response = client_in.get(reverse(endpoint), {"taint": "sometimes"})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["taint"]


def test_the_nodes_page_names_a_misspelt_filter_and_lists_nothing(client_in: Client) -> None:
    nodes = reverse("inventory:nodes")
    page = client_in.get(nodes, {"name": "node-1"}).content.decode()
    assert "<li><code>name</code>: not a filter of this page</li>" in page
    assert "This page's filters: <strong>Node</strong> (<code>q</code>)." in page
    assert 'data-node="node-1"' not in page
    assert (
        'data-node="node-1"'
        not in client_in.get(nodes, {"name": "node-1", "fragment": "body"}).content.decode()
    )
    assert (
        'data-node="node-1"'
        in client_in.get(nodes, {"q": "node", "page": "1", "fragment": "body"}).content.decode()
    )


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("inventory:devices", {"nodee": "node-1"}),
        ("inventory:devices", {"taint": "sometimes"}),
        ("inventory:claims", {"namespac": "ml"}),
        ("inventory:claims", {"extended_resource": "maybe"}),
        ("inventory:nodes", {"name": "node-1"}),
    ],
)
def test_a_page_that_refuses_its_query_answers_400_with_the_page(
    client_in: Client, page: str, params: dict[str, str]
) -> None:
    response = client_in.get(reverse(page), params)
    assert response.status_code == 400
    assert next(iter(params)) in response.content.decode() and "<form" in response.content.decode()
    assert client_in.get(reverse(page)).status_code == 200
