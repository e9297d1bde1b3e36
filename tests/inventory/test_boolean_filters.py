"""Yes/no filters (a claim's `extended_resource`, a pool's `complete`) take true/false (the pages send
those; 1/0 too) and refuse anything else naming the parameter and the accepted values, on the API and on
the page: a value that quietly meant "any" answered every row."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory.models import Claim, Pool
from tests.inventory.pages_support import DRIVER, make_user, small_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> dict[str, Any]:
    found = small_world()
    Claim.objects.create(
        uid="uid-extended",
        namespace="ml",
        name="pod-a-gpu-extended",
        state="pending",
        extended_resource=True,
        owner_pod="pod-a",
        created="2026-11-01T10:00:00Z",
    )
    Pool.objects.create(driver=DRIVER, name="node-9", generation=1, slice_count=1, expected_slice_count=2)
    return found


@pytest.fixture
def api() -> APIClient:
    client = APIClient()
    client.force_authenticate(make_user())
    return client


def _names(api: APIClient, path: str) -> list[str]:
    response = api.get(path)
    assert response.status_code == 200, response.content
    return sorted(r["name"] for r in response.json()["results"])


@pytest.mark.parametrize(
    ("path", "param"),
    [("/api/claims/", "extended_resource"), ("/api/pools/", "complete")],
)
@pytest.mark.parametrize("value", ["maybe", "yes", "2", "unknown", "tru", " true"])
def test_it_refuses_a_yes_no_filter_value_it_does_not_know_naming_the_parameter_and_the_accepted_values(
    api: APIClient, world: dict[str, Any], path: str, param: str, value: str
) -> None:
    response = api.get(path, {param: value})
    assert response.status_code == 400, response.content
    (error,) = response.json()["errors"]
    assert error["field"] == param
    assert "true" in error["message"] and "false" in error["message"], error
    assert repr(value) in error["message"], error


def test_it_filters_by_the_spellings_the_pages_send(api: APIClient, world: dict[str, Any]) -> None:
    for extended, other in (("true", "false"), ("1", "0"), ("True", "False")):
        assert _names(api, f"/api/claims/?extended_resource={extended}") == ["pod-a-gpu-extended"]
        assert _names(api, f"/api/claims/?extended_resource={other}") == ["train"]
    assert _names(api, "/api/claims/?extended_resource=") == ["pod-a-gpu-extended", "train"]
    assert _names(api, "/api/pools/?complete=true") == ["node-1"]
    assert _names(api, "/api/pools/?complete=false") == ["node-9"]


def test_the_claims_page_names_a_bad_yes_no_value_and_lists_nothing(
    client: Client, world: dict[str, Any]
) -> None:
    client.force_login(make_user())
    html = client.get(reverse("inventory:claims"), {"extended_resource": "maybe"}).content.decode()
    assert (
        "<strong>Extended resource</strong> (<code>extended_resource</code>): must be true or false (or 1 or 0), "
        "got &#x27;maybe&#x27;"
    ) in html
    listed = html.split("(<code>extended_resource</code>): must be", 1)[1]
    assert "train" not in listed and "pod-a-gpu-extended" not in listed

    chosen = client.get(reverse("inventory:claims"), {"extended_resource": "true"}).content.decode()
    assert "pod-a-gpu-extended" in chosen and "/claims/ml/train/" not in chosen
    assert '<option value="true" selected>' in chosen
