"""Keyboard-only use in a real browser: the first Tab is a visible "Skip to content" link that takes the
focus past the top bar's dozen links to the page itself."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1440, 390])
def test_the_first_tab_skips_the_top_bar_to_the_page(
    width: int, mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/nodes/")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent.trim()")
    assert focused == "Skip to content"
    box = page.locator("a.skip-link").bounding_box()
    assert box and box["y"] >= 0 and box["x"] >= 0 and box["x"] + box["width"] <= width, (
        box
    )  # seen when focused
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")  # the next stop is in the page, not the nav
    assert page.evaluate("!!document.activeElement.closest('main')"), page.evaluate(
        "document.activeElement.outerHTML.slice(0, 200)"
    )
    # Out of focus, it is out of sight.
    page.mouse.click(5, 400)
    box = page.locator("a.skip-link").bounding_box()
    assert box is None or box["y"] + box["height"] <= 0
