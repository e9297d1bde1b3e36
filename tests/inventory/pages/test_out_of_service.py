"""'Take these devices out of service' on the Devices page: the current filters go into a new
maintenance, where nothing is selected until the operator selects (the safety rails stay there)."""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.inventory.pages_support import DRIVER, make_user, small_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world() -> dict[str, Any]:
    return small_world()


def button_href(html: str) -> str:
    return unescape(html.split('id="out-of-service" href="')[1].split('"')[0])


def test_it_carries_the_filters_into_a_new_maintenance(client: Client, world: dict[str, Any]) -> None:
    client.force_login(make_user("olga", role="operator"))
    html = client.get(
        reverse("inventory:devices"), {"node": "node-1", "driver": DRIVER, "page": "2", "live": "poll"}
    ).content.decode()
    href = button_href(html)
    assert href == f"{reverse('maintenance:new')}?driver={DRIVER}&node=node-1"  # no paging or live keys

    new = client.get(href)
    page = new.content.decode()
    assert new.status_code == 200
    assert 'name="node" value="node-1"' in page
    assert '<span id="selected-count" data-count="0">Nothing is selected yet</span>' in page
    rows = page.split('id="selection-table"')[1].split("</table>")[0]
    assert "gpu-0" in rows and "gpu-1" in rows and "nic-0" not in rows and "checked" not in rows


def test_it_offers_the_whole_inventory_only_as_an_unfiltered_start(
    client: Client, world: dict[str, Any]
) -> None:
    client.force_login(make_user("olga", role="operator"))
    assert button_href(client.get(reverse("inventory:devices")).content.decode()) == reverse(
        "maintenance:new"
    )


def test_a_viewer_is_not_offered_the_button(client: Client, world: dict[str, Any]) -> None:
    client.force_login(make_user("vera", role="viewer"))
    assert (
        'id="out-of-service"'
        not in client.get(reverse("inventory:devices"), {"node": "node-1"}).content.decode()
    )


def test_invalid_filters_offer_no_maintenance(client: Client, world: dict[str, Any]) -> None:
    client.force_login(make_user("olga", role="operator"))
    html = client.get(reverse("inventory:devices"), {"taint": "Sometimes"}).content.decode()
    assert 'id="out-of-service"' not in html
