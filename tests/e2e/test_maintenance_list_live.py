"""The Maintenance list follows the maintenances live, as the audit log does: a maintenance made (or changed)
while the list is open shows up in it without a reload."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from inventory.mirror.runner import MirrorHandle
from inventory.models import Device
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _draft(title: str) -> Draft:
    device = Device.objects.order_by("driver", "pool", "name").first()
    assert device is not None
    return Draft(
        title=title, reason="firmware", ticket="", key="example.com/m", value="", effect="NoSchedule",
        devices=[DeviceRef(device.driver, device.pool, device.name)], filters={},
    )  # fmt: skip


def _create_in_a_thread(user: User, title: str) -> None:
    """The browser's loop owns the test's thread: the ORM works from another."""

    def create() -> None:
        try:
            maintenance_create(user=user, draft=_draft(title))
        finally:
            connection.close()

    worker = threading.Thread(target=create)
    worker.start()
    worker.join(30)


def test_a_maintenance_made_while_the_list_is_open_appears_without_a_reload(
    mirror: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    _create_in_a_thread(operator, "first window")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, operator.username, start="/maintenance/")
    table = page.locator("#maintenance-table")
    expect(table).to_contain_text("first window")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=10_000)
    page.evaluate("window.__sameDocument = true")

    _create_in_a_thread(operator, "second window")

    expect(table).to_contain_text("second window", timeout=10_000)
    expect(table.locator("tbody tr")).to_have_count(2)
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
