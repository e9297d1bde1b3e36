"""A device's page as a user (and a screen reader) reads it: its Attributes and Capacity tables say which
column is the name and which the value (they had no header cells), and the device's status names its claim
as namespace/name with a link to the claim's page (it showed the bare name, as text)."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from tests.inventory.pages_support import DRIVER, device, make_user, small_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    return client


def table(page: str, table_id: str) -> str:
    found = re.search(rf'<table[^>]*id="{table_id}"[^>]*>(.*?)</table>', page, re.S)
    assert found, f"no table {table_id}"
    return found.group(1)


def test_the_attributes_and_capacity_tables_name_their_columns(client_in: Client) -> None:
    small_world()

    page = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-1", "gpu-0"])
    ).content.decode()

    attributes, capacity = table(page, "device-attributes"), table(page, "device-capacity")
    assert re.findall(r'<th scope="col">([^<]*)</th>', attributes) == ["Attribute", "Value"]
    assert re.findall(r'<th scope="col">([^<]*)</th>', capacity) == ["Capacity", "Value"]
    assert "model" in attributes and "h200" in attributes
    assert "memory" in capacity and "141Gi" in capacity


def test_a_device_without_attributes_or_capacity_says_none_under_the_headers(client_in: Client) -> None:
    device("bare-0", attributes={}, capacity={}, numa=None)

    page = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-1", "bare-0"])
    ).content.decode()

    for table_id in ("device-attributes", "device-capacity"):
        assert '<tr><td colspan="2" class="muted">None.</td></tr>' in table(page, table_id)


def test_the_device_status_names_its_claim_with_its_namespace_and_links_to_it(client_in: Client) -> None:
    small_world()  # gpu-0's status, as the mirror writes it: {"namespace": "ml", "claim": "train", …}

    page = client_in.get(
        reverse("inventory:device-detail", args=[DRIVER, "node-1", "gpu-0"])
    ).content.decode()

    status = page.split("<h2>Device status (from the claim)</h2>")[1].split("</table>")[0]
    claim = status.split("<tbody>")[1].split("</td>")[0]
    assert '<a class="obj-link claim-link" href="/claims/ml/train/">' in claim
    assert re.sub(r"<[^>]+>", "", claim).strip() == "ml/train"


def test_a_device_held_by_an_extended_resource_claim_says_so_in_words_not_true(client_in: Client) -> None:
    from tests.inventory import factories as f

    f.write(
        ("resourceslices", f.resource_slice("node-0-gpus", devices=[f.gpu("gpu-0")])),
        (
            "resourceclaims",
            f.claim(
                "trainer-0-extended-resources-x7k2p",
                results=[f.result("gpu-0")],
                annotations={"resource.kubernetes.io/extended-resource-claim": "true"},
                owner_pod="trainer-0",
            ),
        ),
    )

    page = client_in.get(
        reverse("inventory:device-detail", args=["gpu.example.com", "node-0", "gpu-0"])
    ).content.decode()

    badge = re.search(r'<span class="badge"[^>]*>(extended resource[^<]*)</span>', page)
    assert badge and badge.group(1) == "extended resource"
    assert "True" not in page.split("trainer-0-extended-resources-x7k2p")[1].split("</td>")[0]
