"""The Nodes list sorts by its columns in a real browser, as Claims do: the header's button (keyboard too)
asks the server for ?sort=, every page follows, the arrow shows the order, a filter keeps it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_nodes_list_sorts_by_its_columns_on_the_server(
    mirror: MirrorHandle, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/nodes/")
    node_header = page.locator("#nodes-table th", has_text="Node")
    expect(node_header).to_have_attribute("aria-sort", "ascending")  # by name unless asked otherwise

    def names() -> list[str]:
        return list(
            page.eval_on_selector_all("#nodes-table tbody tr[data-node]", "rs => rs.map(r => r.dataset.node)")
        )

    by_name = names()
    assert len(by_name) > 1 and by_name == sorted(by_name)
    node_header.locator("button.th-sort").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/nodes/?sort=-name")
    expect(page.locator("#nodes-table th", has_text="Node")).to_have_attribute("aria-sort", "descending")
    assert names() == sorted(by_name, reverse=True)

    # A driver's column: by devices allocated, highest first on the second press.
    gpu = page.locator("#nodes-table th[data-sort-key='driver:gpu.example.com']")
    gpu.locator("button").click()
    page.wait_for_url(re.compile(r"sort=driver%3Agpu\.example\.com$|sort=driver:gpu\.example\.com$"))
    page.locator("#nodes-table th[data-sort-key='driver:gpu.example.com'] button").click()
    page.wait_for_url(re.compile(r"sort=-driver"))
    expect(page.locator("#nodes-table th[data-sort-key='driver:gpu.example.com']")).to_have_attribute(
        "aria-sort", "descending"
    )
    allocated = [
        int(t.split("/")[0]) if "/" in t else -1
        for t in page.eval_on_selector_all(
            "#nodes-table td[data-driver='gpu.example.com']", "cs => cs.map(c => c.textContent.trim())"
        )
    ]
    assert allocated == sorted(allocated, reverse=True)

    # Filtering keeps the order asked for.
    page.fill("form.filters input[name=q]", by_name[0][:3])
    page.locator("form.filters button").click()
    page.wait_for_url(re.compile(r"q=.*sort=-driver|sort=-driver.*q="))
    expect(page.locator("#nodes-table th[data-sort-key='driver:gpu.example.com']")).to_have_attribute(
        "aria-sort", "descending"
    )
