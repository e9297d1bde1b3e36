"""A device whose driver reports no health reads the same on every page: the Devices table (drawn by
devices.js from the words the page hands it), the device's page and the Health filter's choice."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from inventory.tables import HEALTH_UNREPORTED
from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_in(client: Client) -> Client:
    client.force_login(make_user())
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])))
    return client


def test_no_health_reads_the_same_in_the_table_on_the_device_page_and_in_the_filter(
    client_in: Client,
) -> None:
    device_page = client_in.get("/devices/gpu.example.com/node-0/gpu-0/").content.decode()
    shown = re.search(r"<dt>Health</dt><dd><span class=\"muted\">([^<]+)</span></dd>", device_page)
    assert shown and shown.group(1) == HEALTH_UNREPORTED == "not reported"

    devices = client_in.get("/devices/").content.decode()
    spec = json.loads(
        devices.split('id="device-table-spec" type="application/json">')[1].split("</script>")[0]
    )
    assert spec["healthUnreported"] == shown.group(1)  # what devices.js shows in the Health column
    assert f'<option value="unreported">{shown.group(1)}</option>' in devices
    rows = client_in.get("/devices/data/").json()["data"]
    assert [r["health"] for r in rows] == [""]  # the data and the exports keep the value itself
