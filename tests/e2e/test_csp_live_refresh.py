"""A live refresh keeps to the strict Content-Security-Policy: when htmx swaps the Overview's summary in
again, it must not copy the old elements' inline `style` attributes onto the new ones (its "settle" step
does so by default, and Chart.js styles the chart's canvas): under `style-src 'self'` the browser refuses
that and reports a violation on every refresh."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in
from tests.e2e.ui_pages import console_watch, violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_live_refresh_of_the_overview_causes_no_policy_violation(
    mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    with console_watch(page) as problems:
        log_in(page, asgi_server, viewer.username, start="/")
        page.wait_for_function("document.getElementById('class-chart').width > 0")
        assert page.get_attribute("#class-chart", "style")  # Chart.js styled the canvas
        assert violations(page) == []
        page.evaluate("""() => new Promise((done) => {
            document.body.addEventListener("htmx:afterSettle", () => done(), { once: true });
            document.getElementById("overview-summary").dispatchEvent(new CustomEvent("live-refresh"));
        })""")  # fmt: skip
        page.wait_for_function("document.getElementById('class-chart').width > 0")
        assert violations(page) == []
    assert problems == []
