"""The Devices table's Age: how long each device's ResourceSlice has been published, as kubectl's AGE."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db

OLD, NEW = "2026-10-01T08:00:00Z", "2026-11-20T17:30:05Z"


def _publish(name: str, pool: str, created: str) -> None:
    slice_obj = f.resource_slice(name, pool=pool, node=pool, devices=[f.gpu("gpu-0")])
    slice_obj["metadata"]["creationTimestamp"] = created
    f.write(("deviceclasses", f.device_class("gpu.example.com")), ("resourceslices", slice_obj))


def test_it_serves_each_devices_slice_creation_and_sorts_the_youngest_first(client: Client) -> None:
    client.force_login(make_user())
    _publish("old", "node-a", OLD)
    _publish("new", "node-b", NEW)
    url = reverse("inventory:devices-data")
    rows = client.get(url, {"sort": "age", "dir": "asc"}).json()["data"]
    assert [(r["pool"], r["age"]) for r in rows] == [("node-b", NEW), ("node-a", OLD)]
    rows = client.get(url, {"sort": "age", "dir": "desc"}).json()["data"]
    assert [r["pool"] for r in rows] == ["node-a", "node-b"]
    body = b"".join(client.get(reverse("inventory:devices-export-csv")).streaming_content).decode()
    header, *lines = list(csv.reader(io.StringIO(body)))
    assert sorted(line[header.index("age")] for line in lines) == [OLD, NEW]  # the export keeps the time
