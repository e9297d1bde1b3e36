"""A device whose driver reports no health reads the same in the Devices table (drawn by devices.js) as on
the device's page: the table said "—", the page "not reported"."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in
from tests.inventory import factories as f

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def device(viewer: Any) -> None:
    f.write(("resourceslices", f.resource_slice("s0", devices=[f.gpu("gpu-0")])))


def test_no_health_reads_the_same_in_the_table_and_on_the_device_page(
    device: None, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/")
    cell = page.locator(
        '.tabulator-row[data-device="gpu.example.com/node-0/gpu-0"] .tabulator-cell[tabulator-field="health"]'
    )
    cell.wait_for()
    in_table = cell.inner_text().strip()
    page.goto(f"{asgi_server}/devices/gpu.example.com/node-0/gpu-0/")
    on_page = page.locator("dt:text-is('Health') + dd").inner_text().strip()
    assert in_table == on_page == "not reported"
