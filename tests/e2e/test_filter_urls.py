"""A filter form's URL in a real browser says only what was chosen: the empty fields are left out, so a
shared link reads ?driver=… rather than ?q=&driver=…&pool=&node=&…"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_devices_filters_put_only_what_was_chosen_in_the_url(
    mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/devices/")
    form = page.locator("#device-filters")
    driver = form.locator("select[name=driver]")
    choice = driver.locator("option:not([value=''])").first.get_attribute("value")
    assert choice
    driver.select_option(choice)
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/devices/?*")
    assert parse_qsl(urlsplit(page.url).query, keep_blank_values=True) == [("driver", choice)]
    expect(driver).to_have_value(choice)
    expect(page.locator("#device-filters input[name=pool]")).to_have_value("")

    driver.select_option("")
    form.locator("button[type=submit]").click()
    page.wait_for_url(lambda url: urlsplit(url).query == "")
