"""The top bar's badge does not read a plain green "live" while the stale-data banner says the data may not be
current (the mirror not synced, the cluster unreachable): it says "live · data not current", and plain "live"
again once the banner is gone. Before, "● live" next to "The data shown may not be current" read as if the
cluster's data were live."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in, mirror_current

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_live_badge_says_when_the_data_is_not_current(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/nodes/")  # no watch has reported: not synced yet
    expect(page.locator('[data-testid="status-banner"]')).to_be_visible()
    badge = page.locator("#live-status")
    expect(badge).to_have_attribute("data-state", "live", timeout=10_000)
    expect(badge).to_have_text("live · data not current")
    expect(badge).to_have_attribute("data-current", "false")

    mirror_current()
    page.evaluate("window.dradashLive.refresh(null)")  # what a change does: the banner is fetched again
    expect(page.locator('[data-testid="status-banner"]')).to_have_count(0)
    expect(badge).to_have_text("live")
    expect(badge).to_have_attribute("data-current", "true")
