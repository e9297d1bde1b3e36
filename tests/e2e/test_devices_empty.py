"""The Devices table empty on a fresh cluster says that no ResourceSlice publishes a device yet; empty under a
filter, that no device matches the filters. It read "No devices match these filters." with no filter set."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_empty_devices_table_says_why(viewer: Any, asgi_server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/")
    placeholder = page.locator("#devices-table .tabulator-placeholder")
    expect(placeholder).to_have_text("No devices in the mirror yet: no ResourceSlice publishes any.")

    page.goto(f"{asgi_server}/devices/?driver=gpu.example.com")
    expect(placeholder).to_have_text("No devices match these filters.")
