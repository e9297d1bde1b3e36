"""Every panel's heading sits at the same distance from the panel's top: the What-if page's last two panels
(the device plugin removal, recent runs) had 20 px more above their heading than the others."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GAPS = """() => Array.from(document.querySelectorAll('main .panel')).flatMap((panel) => {
  const h = panel.querySelector(':scope > h2');
  if (!h || panel.firstElementChild !== h) return [];
  return [[h.textContent.trim().slice(0, 40), Math.round(h.getBoundingClientRect().top - panel.getBoundingClientRect().top)]];
})"""


def test_panel_headings_sit_at_one_distance_from_the_panel_top(
    viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/whatif/")
    gaps = page.evaluate(GAPS)
    assert len(gaps) >= 5, gaps
    assert len({gap for _, gap in gaps}) == 1, gaps
