"""The Claims page sorts on the server (every page, not just the one shown): ?sort=KEY or ?sort=-KEY."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def claims() -> None:
    objs = []
    for namespace, name, created in (("b", "alpha", "2026-11-03T10:00:00Z"), ("a", "gamma", "2026-11-01T10:00:00Z"),
                                     ("c", "beta", "2026-11-02T10:00:00Z")):  # fmt: skip
        obj = f.claim(name, namespace=namespace)
        obj["metadata"]["creationTimestamp"] = created
        objs.append(("resourceclaims", obj))
    f.write(*objs)


def names(client: Client, sort: str) -> list[str]:
    html = client.get("/claims/", {"sort": sort} if sort else {}).content.decode()
    return re.findall(r'href="/claims/\w+/(\w+)/"', html)


def test_it_sorts_claims_by_the_column_asked_for(client: Client, claims: None) -> None:
    client.force_login(make_user())
    assert names(client, "") == ["gamma", "alpha", "beta"]  # namespace, then name
    assert names(client, "name") == ["alpha", "beta", "gamma"]
    assert names(client, "-name") == ["gamma", "beta", "alpha"]
    assert names(client, "age") == ["alpha", "beta", "gamma"]  # youngest first
    assert names(client, "-age") == ["gamma", "beta", "alpha"]
    assert names(client, "nonsense") == ["gamma", "alpha", "beta"]


def test_it_marks_the_sorted_column_for_the_table_script(client: Client, claims: None) -> None:
    client.force_login(make_user())
    html = client.get("/claims/", {"sort": "-age"}).content.decode()
    assert 'data-table="claims" data-sort-param="sort" data-sort-current="-age"' in html
    assert '<th data-sort-key="age">Age</th>' in html
    assert "<time datetime=" in html
