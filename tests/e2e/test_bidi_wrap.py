"""Hostile cluster and user strings in a real browser: an unbroken 500-character reason wraps instead of
widening the maintenance pages, and a right-to-left override (U+202E) in a title is isolated in a <bdi>,
so the text after it reads left to right."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from inventory.mirror.runner import MirrorHandle
from inventory.models import Device
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RTL_TITLE = "firmware \u202eevil update"  # an override that is never closed
LONG_REASON = "x" * 500


@pytest.fixture
def maintenance(mirror: MirrorHandle, operator: User) -> Any:
    """A draft with the two hostile strings (made before the browser starts: its loop owns the thread)."""
    device = Device.objects.order_by("driver", "pool", "name").first()
    assert device is not None
    draft = Draft(
        title=RTL_TITLE, reason=LONG_REASON, ticket="", key="example.com/m", value="", effect="NoSchedule",
        devices=[DeviceRef(device.driver, device.pool, device.name)], filters={},
    )  # fmt: skip
    return maintenance_create(user=operator, draft=draft)


def test_a_long_reason_wraps_and_an_rtl_override_is_isolated(
    maintenance: Any, operator: User, asgi_server: str, browser: Any
) -> None:
    m = maintenance

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, operator.username, start="/maintenance/")
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/maintenance/", f"/maintenance/{m.pk}/", "/maintenance/audit/"):
            page.goto(f"{asgi_server}{path}")
            page.wait_for_load_state("networkidle")
            wide = page.evaluate("document.documentElement.scrollWidth")
            assert wide <= width, f"{path} is {wide} px wide at {width} px"
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{asgi_server}/maintenance/{m.pk}/")
    # The title is isolated: a <bdi> holds exactly the user's string, override included.
    title = page.locator("h1 bdi.k8s")
    assert title.text_content() == RTL_TITLE
    # ... so the text after the title is not reversed: the id still follows it, left to right.
    h1_box = page.locator("h1").bounding_box()
    bdi_box = title.bounding_box()
    small_box = page.locator("h1 small").bounding_box()
    assert h1_box and bdi_box and small_box
    assert small_box["x"] >= bdi_box["x"] + bdi_box["width"] - 1
    # The reason wraps inside the page (several lines, never wider than its paragraph).
    reason = page.locator("p.sub bdi.k8s", has_text="xxxx")
    box = reason.bounding_box()
    assert box and box["height"] > 30
    assert page.evaluate("document.documentElement.scrollWidth") <= 1440
    # The list shows the title isolated too.
    page.goto(f"{asgi_server}/maintenance/")
    assert page.locator("td bdi.k8s", has_text="evil").count() == 1


def test_a_parameter_name_with_an_rtl_override_does_not_reorder_its_message(
    mirror: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    """A page names a parameter it does not take as sent; an override in that name stays inside its <code>."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, operator.username, start="/devices/")
    page.goto(f"{asgi_server}/devices/?%E2%80%AEevil=1")
    line = page.locator("ul.query-errors li").first
    code = line.locator("code").first
    assert code.text_content() == "\u202eevil"
    # The words after the name ("… not a filter of this page") start right of it, left to right.
    after = line.evaluate(
        """li => { const code = li.querySelector('code'); const r = document.createRange();
                   r.setStartAfter(code); r.setEndAfter(li.lastChild); const box = r.getBoundingClientRect();
                   return {x: box.x, text: r.toString()}; }"""
    )
    box = code.bounding_box()
    assert box and "not a filter" in after["text"]
    assert after["x"] >= box["x"] + box["width"] - 1
