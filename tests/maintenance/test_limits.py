"""Limits per maintenance (configurable, with a message naming the setting), and pages that stay small
for the largest maintenance the limits allow."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from inventory.models import Device
from maintenance.models import Maintenance
from maintenance.planning import DeviceRef
from maintenance.services import MaintenanceError
from tests.maintenance.support import GPU, create

pytestmark = pytest.mark.django_db


def test_it_refuses_more_devices_than_the_limit(mirrored: Any, operator: Any, settings: Any) -> None:
    settings.DRADASH_MAINTENANCE_MAX_DEVICES = 3
    devices = [DeviceRef(GPU, "node-0", f"gpu-{i}") for i in range(4)]
    with pytest.raises(MaintenanceError) as error:
        create(operator, devices=devices)
    assert error.value.errors[0].field == "devices"
    assert "at most 3 are allowed" in error.value.errors[0].message
    assert "DRADASH_MAINTENANCE_MAX_DEVICES" in error.value.errors[0].message
    with pytest.raises(MaintenanceError):
        create(operator, devices=[], every_device=True)  # every device is more than 3 too
    assert not Maintenance.objects.exists()


def test_it_refuses_more_rules_than_the_limit(mirrored: Any, operator: Any, settings: Any) -> None:
    settings.DRADASH_MAINTENANCE_MAX_RULES = 2
    devices = [
        DeviceRef(GPU, node, "gpu-0") for node in ("node-0", "node-1", "node-2")
    ]  # three partial pools
    with pytest.raises(MaintenanceError) as error:
        create(operator, devices=devices)
    assert error.value.errors[0].field == "rules"
    assert "DRADASH_MAINTENANCE_MAX_RULES" in error.value.errors[0].message
    assert not Maintenance.objects.exists()


@pytest.fixture
def big_inventory(db: Any) -> list[DeviceRef]:
    """5,000 devices in 500 pools of 10: the largest maintenance the default limits allow."""
    rows = [
        Device(slice_uid=f"s-{p}", slice_name=f"slice-{p}", driver=GPU, pool=f"node-{p:03d}", name=f"gpu-{d}",
               node_name=f"node-{p:03d}")
        for p in range(500) for d in range(10)
    ]  # fmt: skip
    Device.objects.bulk_create(rows, batch_size=1000)
    return [DeviceRef(r.driver, r.pool, r.name) for r in rows]


def test_it_keeps_the_pages_of_the_largest_maintenance_small(
    big_inventory: list[DeviceRef], operator: Any
) -> None:
    m = create(operator, devices=big_inventory)
    assert (m.device_count, m.rule_count) == (5000, 500)
    client = Client()
    client.force_login(operator)
    detail = client.get(f"/maintenance/{m.id}/")
    assert detail.status_code == 200
    assert len(detail.content) < 200_000, len(detail.content)
    assert b"the first 10 of 500" in detail.content and b"page 1 of 100" in detail.content
    full = client.get(f"/maintenance/{m.id}/rules.yaml")
    assert full.content.count(b"kind: DeviceTaintRule") == 500
    new = client.get("/maintenance/new/")
    assert len(new.content) < 200_000 and b"page 1 of 50" in new.content
    assert b"<strong>5000</strong> devices match" in new.content
    api = client.get(f"/api/maintenance/{m.id}/").json()
    assert api["yaml_complete"] is False and api["yaml"].count("kind: DeviceTaintRule") == 50
    assert len(client.get("/maintenance/").content) < 100_000


def test_it_refuses_a_draft_one_device_over_the_limit(
    big_inventory: list[DeviceRef], operator: Any, settings: Any
) -> None:
    settings.DRADASH_MAINTENANCE_MAX_DEVICES = 4999
    with pytest.raises(MaintenanceError) as error:
        create(operator, devices=big_inventory)
    assert "would select 5000 devices; at most 4999 are allowed" in error.value.errors[0].message
