"""The Search page's form at phone width: the query, the kind and the Search button all fit inside their
panel (the panel scrolls rather than overflow the page, so a button past its edge is cut off unseen)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: the form's controls whose right edge is past the panel's inner edge
CUT_OFF = """() => {
  const form = document.querySelector("form.search-form");
  const panel = form.closest(".panel");
  const edge = panel.getBoundingClientRect().right - parseFloat(getComputedStyle(panel).paddingRight);
  return Array.from(form.querySelectorAll("input, select, button"))
    .filter((el) => el.getBoundingClientRect().right > edge + 1)
    .map((el) => el.tagName.toLowerCase() + " right=" + Math.round(el.getBoundingClientRect().right) +
         " edge=" + Math.round(edge));
}"""


def test_it_keeps_the_search_button_inside_its_panel_at_390_px(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/")
    page.goto(f"{asgi_server}/search/?q=gpu")

    assert page.evaluate(CUT_OFF) == []
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/search/?q=gpu*")
