"""The New maintenance page selects nothing until the operator does; "all N matching" is an explicit
choice that shows N and the nodes and drivers it spans; a filter it does not know selects nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from inventory.models import Device
from maintenance.models import Maintenance

pytestmark = pytest.mark.django_db

TAINT = {"title": "t", "reason": "r", "key": "example.com/maintenance", "value": "", "effect": "NoExecute"}


@pytest.fixture
def client(operator: Any) -> Client:
    c = Client()
    c.force_login(operator)
    return c


def test_it_selects_nothing_until_the_operator_does(mirrored: Any, client: Client) -> None:
    page = client.get("/maintenance/new/").content.decode()
    total = Device.objects.count()
    assert (
        f"<strong>{total}</strong> devices match (no filter is set: this is every device in the cluster)"
        in page
    )
    assert "Nothing is selected yet" in page
    assert not re.search(r"<input[^>]*checked", page), "no checkbox or radio is pre-selected"
    assert "They span <strong>3</strong> nodes (node-0, node-1, node-2)" in page
    assert "2 drivers (gpu.example.com, nic.example.com)" in page

    response = client.post("/maintenance/new/", TAINT)
    assert response.status_code == 400 and "nothing is selected" in response.content.decode()
    assert not Maintenance.objects.exists()


def test_it_selects_all_matching_only_when_asked_and_only_the_count_shown(
    mirrored: Any, client: Client
) -> None:
    total = Device.objects.count()
    stale = client.post("/maintenance/new/", {**TAINT, "select_all": "yes", "matching_count": total - 1})
    assert stale.status_code == 400 and "not the" in stale.content.decode()
    assert not Maintenance.objects.exists()
    response = client.post("/maintenance/new/", {**TAINT, "select_all": "yes", "matching_count": total})
    assert response.status_code == 302
    assert Maintenance.objects.get().device_count == total


def test_it_creates_a_draft_from_ticked_devices(mirrored: Any, client: Client) -> None:
    response = client.post(
        "/maintenance/new/?node=node-1", {**TAINT, "device": ["gpu.example.com|node-1|gpu-0"]}
    )
    assert response.status_code == 302
    m = Maintenance.objects.get()
    assert m.devices == [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"}]
    assert m.filters == {"node": "node-1"}


def test_it_refuses_a_filter_it_does_not_know(mirrored: Any, client: Client) -> None:
    page = client.get("/maintenance/new/?nod=node-0")
    html = page.content.decode()
    assert "filters.nod" in html and "Unknown filter" in html
    assert 'id="selection-table"' not in html and "select_all" not in html
    response = client.post(
        "/maintenance/new/?nod=node-0", {**TAINT, "select_all": "yes", "matching_count": 1}
    )
    assert response.status_code == 400
    assert not Maintenance.objects.exists()
