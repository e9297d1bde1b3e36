"""Text the bar and the Devices table's pager show is readable (WCAG AA, 4.5:1) in both themes: in the light
theme the top bar's "API tokens" link was the page's link blue on the dark bar (2.7:1), and in the dark theme
the pager's "Page Size" label kept Tabulator's #555 on the dark footer (2.2:1)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

#: the contrast ratio of an element's text against the first opaque background behind it
CONTRAST = """(el) => {
  const rgb = (c) => c.match(/[\\d.]+/g).map(Number);
  const lum = ([r, g, b]) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let back = null;
  for (let e = el; e && !back; e = e.parentElement) {
    const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length < 4 || c[3] === 1) back = c;
  }
  const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(back || [255, 255, 255])];
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_bar_link_and_the_pager_label_are_readable(
    scheme: str, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
    log_in(page, asgi_server, viewer.username, start="/devices/")
    page.wait_for_selector(".tabulator-footer .tabulator-paginator label")
    tokens = page.locator(".topbar .who a", has_text="API tokens")
    assert tokens.evaluate(CONTRAST) >= 4.5
    label = page.locator(".tabulator-footer .tabulator-paginator label")
    assert label.inner_text().strip().lower() == "page size"
    assert label.evaluate(CONTRAST) >= 4.5
