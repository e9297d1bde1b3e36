"""Sortable number columns in a real browser: a title of two words stays on one line beside its sort arrow
(Classes' "Fit together" wrapped and left its arrow a column's width away from the words)."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_number_columns_title_stays_on_one_line_beside_its_arrow(
    mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/classes/")
    expect(page.locator("th.num .th-sort").first).to_be_visible(timeout=10_000)
    titles = page.evaluate(
        """() => Array.from(document.querySelectorAll('th.num .th-sort')).map((b) => ({
             text: b.textContent.trim(),
             lines: Math.round(b.getBoundingClientRect().height / parseFloat(getComputedStyle(b).lineHeight)),
           }))"""
    )
    assert any(t["text"].lower() == "fit together" for t in titles), titles
    assert [t for t in titles if t["lines"] != 1] == []
