"""The Devices table's Age column in a real browser: each device's ResourceSlice age in the words of the
other Age columns, the UTC time in its title, sortable youngest first, and the table still fits at 1280 px."""

from __future__ import annotations

import re
from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_it_shows_how_long_each_device_has_been_published(
    mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/")
    header = page.locator(".tabulator-col[tabulator-field=age]")
    expect(header).to_be_visible(timeout=10_000)
    expect(header).to_contain_text("Age")
    age = page.locator(".tabulator-row .tabulator-cell[tabulator-field=age] time").first
    expect(age).to_have_text(re.compile(r"^(just now|\d+ (s|min|h|d) ago)$"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", age.get_attribute("title") or "")
    holder = page.locator(".tabulator-tableholder")
    assert holder.evaluate("(h) => h.scrollWidth <= h.clientWidth + 1"), "the table is clipped at 1280 px"
    for width in (1280, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        cut = page.evaluate(
            """() => Array.from(document.querySelectorAll('.tabulator-col .tabulator-col-title'))
                 .filter((t) => t.offsetParent && t.scrollWidth > t.clientWidth).map((t) => t.textContent)"""
        )
        assert cut == [], (width, cut)  # "HEAL…", "ALLOCATA…": a header must be read whole
    header.focus()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"sort=age"))
