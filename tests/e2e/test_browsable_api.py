"""DRF's browsable API in a real browser, under the strict Content-Security-Policy: no console error, no
failed request (its icon included), and the page laid out as DRF lays it out."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in
from tests.e2e.ui_pages import WATCH_VIOLATIONS, violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: the API root (no filters), a list with extra actions and filters, one with filters, one with a POST form
API_PAGES = ["/api/devices/", "/api/", "/api/whatif/runs/", "/api/maintenance/"]
FLOAT_AND_MARGIN = "e => [getComputedStyle(e).cssFloat, getComputedStyle(e).marginRight]"


def test_it_renders_the_browsable_api_without_a_console_error_or_a_failed_request(
    demo_mirrored: None, operator: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.add_init_script(WATCH_VIOLATIONS)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{page.url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"{page.url}: page error: {e}"))
    # a request the browser itself cancelled as the next page was opened (its icon fetch, say) failed no one:
    # a missing file still shows as a 404 response below
    page.on(
        "requestfailed",
        lambda r: problems.append(f"{r.url}: {r.failure}") if r.failure != "net::ERR_ABORTED" else None,
    )
    page.on("response", lambda r: problems.append(f"{r.url}: {r.status}") if r.status >= 400 else None)
    log_in(page, asgi_server, operator.username, start="/")

    for path in API_PAGES:
        response = page.goto(f"{asgi_server}{path}")
        assert response is not None and response.status == 200, path
        assert "style-src 'self'" in (response.headers.get("content-security-policy") or ""), path
        page.wait_for_load_state("networkidle")
        assert violations(page) == [], path
        if path == "/api/devices/":
            # DRF's own layout, from a stylesheet now: the two buttons float right, spaced.
            filters = page.get_by_role("button", name="Filters")
            for action in (page.locator(".dropdown:has(#extra-actions-menu)"), filters):
                assert action.evaluate(FLOAT_AND_MARGIN) == ["right", "10px"]
            # Its scripts run: the JSON is highlighted and the filters open in their dialog.
            expect(page.locator(".response-info pre .str").first).to_be_visible()
            filters.click()
            expect(page.locator("#filtersModal")).to_be_visible()
    assert problems == []
