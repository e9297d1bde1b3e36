"""The "Columns" chooser is a list laid over the table: it closes like a menu. Escape closes it and gives the
focus back to its button (keyboard-only use), and a click elsewhere on the page closes it; before, it stayed
open over the rows until its button was pressed again."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _check(page: Any, chooser: Any) -> None:
    from playwright.sync_api import expect

    summary = chooser.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    expect(chooser).to_have_attribute("open", "")
    page.keyboard.press("Tab")  # into the list: the first column's box is disabled, so the second one
    assert page.evaluate("!!document.activeElement.closest('details.col-chooser')")
    page.keyboard.press("Escape")
    expect(chooser).not_to_have_attribute("open", "")
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY", "the focus goes back to the button"

    summary.click()
    expect(chooser).to_have_attribute("open", "")
    chooser.locator("input:not([disabled])").first.click()  # a click inside keeps it open
    expect(chooser).to_have_attribute("open", "")
    page.locator("h1").click()
    expect(chooser).not_to_have_attribute("open", "")


def test_the_tables_column_chooser_closes_on_escape_and_outside_click(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/accounts/tokens/")
    _check(page, page.locator("details.col-chooser"))
    page.close()


def test_the_devices_column_chooser_closes_on_escape_and_outside_click(
    demo_mirrored: None, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/")
    expect(page.locator("#device-columns")).to_have_count(1, timeout=15_000)
    _check(page, page.locator("#device-columns"))
    page.close()
