"""A refused form shows its error where the user is looking: the what-if page came back from a refused
taint impact (its third form) scrolled to the top, with the message under the form far below the first
screen (1,380 px down at phone width), so "Show the impact" seemed to do nothing. The page now brings the
error into view and puts the keyboard focus on it (a screen reader reads it out)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: whether the element is wholly inside the viewport, and whether it (or something in it) has the focus
SEEN = """(el) => {
  const r = el.getBoundingClientRect();
  return {inView: r.top >= 0 && r.bottom <= window.innerHeight, focused: el.contains(document.activeElement)};
}"""


@pytest.mark.parametrize("width", [390, 1440])
def test_a_refused_what_if_brings_its_error_into_view_and_focus(
    width: int, operator: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 800})
    log_in(page, asgi_server, operator.username, start="/whatif/")
    form = page.locator("#form-taint form")
    form.locator("input[name=key]").fill("not a key!")
    form.get_by_role("button", name="Show the impact").click()
    page.wait_for_load_state()
    error = page.locator("#taint_impact-error")
    assert "Key" in error.inner_text()
    assert form.locator("input[name=key]").input_value() == "not a key!"
    assert error.evaluate(SEEN) == {"inView": True, "focused": True}


def test_an_unrefused_page_keeps_the_focus_where_it_was(
    operator: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 800})
    log_in(page, asgi_server, operator.username, start="/whatif/")
    assert page.evaluate("window.scrollY") == 0
    assert page.evaluate("document.activeElement === document.body")
