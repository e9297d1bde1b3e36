"""A button's words stay on one line: a flex row squeezed "Export CSV" (Audit log, 1440 px) and "Create
snapshot" (pool status) onto two. Rows of buttons wrap instead; at phone width no page is wider than the
screen (test_ui_shell)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in, user
from tests.e2e.ui_pages import MAIN_PAGES

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: buttons and links styled as buttons (a table header's sort button is its title: it may wrap)
BUTTONS = "main .btn, main button:not(.th-sort), main input[type=submit]"

#: the visible buttons of the page whose text runs over more than one line, and those whose words may wrap
WRAPPED = """(selector) => {
  const lines = [];
  const wrappable = [];
  document.querySelectorAll(selector).forEach((el) => {
    if (!el.getClientRects().length) return;
    const name = (el.id || el.className || el.tagName) + ": " + (el.textContent || el.value || "").trim().slice(0, 40);
    const range = document.createRange();
    range.selectNodeContents(el);
    const tops = new Set(Array.from(range.getClientRects()).filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    if (tops.size > 1) lines.push(name);
    if (getComputedStyle(el).whiteSpace !== "nowrap") wrappable.push(name);
  });
  return [lines, wrappable];
}"""


@pytest.fixture
def operator(transactional_db: None) -> Any:
    return user("oskar", "operator")


def test_no_button_text_wraps_at_desktop_widths(operator: Any, asgi_server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, operator.username, start="/maintenance/audit/")
    wrapped: dict[str, Any] = {}
    for path, name in MAIN_PAGES:
        page.goto(f"{asgi_server}{path}")
        page.wait_for_load_state("networkidle")
        for width in (1440, 1280, 1024):
            page.set_viewport_size({"width": width, "height": 900})
            lines, wrappable = page.evaluate(WRAPPED, BUTTONS)
            if lines:
                wrapped[f"{name} at {width}: on two lines"] = lines
            if wrappable:  # a font or a zoom level away from two lines
                wrapped[f"{name} at {width}: may wrap"] = wrappable
    assert wrapped == {}
    page.goto(f"{asgi_server}/maintenance/audit/")
    assert page.locator("#audit-csv").evaluate("(el) => getComputedStyle(el).whiteSpace") == "nowrap"
