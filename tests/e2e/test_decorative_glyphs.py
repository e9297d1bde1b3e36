"""A screen reader reads a header or heading by its words, not by the glyphs drawn beside them: a sortable
column was "Pool ↕" (▲ / ▼ once sorted), and the maintenance page's heading "Timeline ● live". The marks
are hidden from assistive tech; how a column is sorted is said by its header's aria-sort. Names are read
from the browser's own accessibility tree."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.planning import DeviceRef
from tests.e2e.browser_helpers import log_in
from tests.inventory import factories as f
from tests.maintenance.support import GPU, create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GLYPHS = set("↕▲▼●")


def names(page: Any, role: str) -> list[str]:
    """The accessible name of every node of `role` in chromium's accessibility tree."""
    tree = page.context.new_cdp_session(page).send("Accessibility.getFullAXTree")
    return [
        str(n.get("name", {}).get("value", ""))
        for n in tree["nodes"]
        if n.get("role", {}).get("value") == role and not n.get("ignored")
    ]


def test_sortable_headers_are_read_by_their_titles_and_say_how_they_are_sorted(
    demo_mirrored: None, operator: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, operator.username, start="/devices/")  # the Devices table (Tabulator)
    pool = page.locator(".tabulator-col[tabulator-field=pool]")
    expect(pool).to_be_visible(timeout=10_000)
    headers = [h.lower() for h in names(page, "columnheader")]  # (drawn in capitals: text-transform)
    assert "pool" in headers and "device" in headers, headers
    assert [h for h in headers if GLYPHS & set(h)] == []
    assert pool.get_attribute("aria-sort") == "none"

    page.goto(f"{asgi_server}/classes/")  # a server-rendered table, sorted in the page (tables.js)
    name = page.locator("th", has=page.locator(".th-sort", has_text="Name"))
    expect(name).to_have_attribute("aria-sort", "none")
    name.locator(".th-sort").click()
    expect(name).to_have_attribute("aria-sort", "ascending")
    headers = [h.lower() for h in names(page, "columnheader")]
    assert "name" in headers and "fit together" in headers, headers
    assert [h for h in headers if GLYPHS & set(h)] == []


@pytest.fixture
def draft(operator: Any, asgi_server: str) -> str:
    f.write(("resourceslices", f.resource_slice("node-0-gpu", devices=[f.gpu("gpu-0")])))
    return create(operator, devices=[DeviceRef(GPU, "node-0", "gpu-0")]).id


def test_the_maintenance_progress_heading_is_read_without_its_live_badge(
    draft: str, operator: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, operator.username, start=f"/maintenance/{draft}/")
    expect(page.locator("#progress-live")).to_have_text("live", timeout=10_000)

    assert "Timeline" in names(page, "heading")
    assert [h for h in names(page, "heading") if GLYPHS & set(h) or "live" in h.split()] == []
    statuses = page.locator("#progress-live").evaluate("(e) => e.closest('h1, h2, h3')")
    assert statuses is None  # the badge still says "live", beside the heading
