"""A device whose driver reports no health reads the same on every page: the Devices table (drawn by
devices.js from the words the page hands it), the device's page and the Health filter's choice."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from inventory.filters import HEALTH_CHOICES
from inventory.models import HEALTH_STATES
from inventory.tables import health_label
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
    assert shown and shown.group(1) == health_label("") == "not reported"

    devices = client_in.get("/devices/").content.decode()
    spec = json.loads(
        devices.split('id="device-table-spec" type="application/json">')[1].split("</script>")[0]
    )
    assert spec["healthUnreported"] == shown.group(1)  # what devices.js shows in the Health column
    assert f'<option value="unreported">{shown.group(1)}</option>' in devices
    rows = client_in.get("/devices/data/").json()["data"]
    assert [r["health"] for r in rows] == [""]  # the data and the exports keep the value itself


def test_every_health_state_reads_as_its_one_declaration_words_it(client_in: Client) -> None:
    """models.HEALTH_STATES is the one table of health words: the pages and the filter read it."""
    devices = client_in.get("/devices/").content.decode()
    health_filter = devices.split('<select name="health">')[1].split("</select>")[0]
    options = re.findall(r'<option value="([^"]+)"\s*>([^<]*)</option>', health_filter)
    assert options == HEALTH_CHOICES == [(value or "unreported", label) for value, label in HEALTH_STATES]
    assert [health_label(value) for value, _ in HEALTH_STATES] == [label for _, label in HEALTH_STATES]
    assert dict(HEALTH_STATES)[""] == "not reported"
    assert health_label("Degraded") == "Degraded"  # a value the table does not know: as reported
