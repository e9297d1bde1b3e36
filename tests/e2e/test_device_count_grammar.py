"""The Devices page counts its matches in English: "1 device matches", "2 devices match"."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest

from inventory.mirror.runner import MirrorHandle
from inventory.models import Device
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def one_device_query(mirror: MirrorHandle) -> str:
    """A Devices filter that matches exactly one device: its unique uuid attribute (looked up before the
    browser starts: its loop owns the thread)."""
    device = next(d for d in Device.objects.order_by("driver", "pool", "name") if "uuid" in d.attributes)
    uuid = next(iter(device.attributes["uuid"].values()))
    return f"?attribute={quote(f'uuid={uuid}')}"


def test_it_says_one_device_matches(
    one_device_query: str, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username)
    page.goto(f"{asgi_server}/devices/{one_device_query}")

    expect(page.locator("#device-count")).to_have_text("1 device matches")
    page.goto(f"{asgi_server}/devices/?attribute=model%3DH100")
    expect(page.locator("#device-count")).to_have_text(re.compile(r"^\d+ devices match$"))
