"""Device plugins → DRA at phone width: the node and pod names in its tables, and in the answer of its
"what if the plugin is removed" question, stay whole (at 390 px the "Nodes with a device plugin" table broke
"legacy-00" at its hyphen, "legacy-" / "00", and the answer "default/cuda-" / "legacy-6sjpz"), and are links
to their pages, as every other table's names are."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from allocation.services import whatif_run_execute
from tests.e2e.browser_helpers import log_in
from tests.e2e.test_names_stay_whole import BROKEN

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_device_plugin_tables_keep_names_whole_and_link_them_at_phone_width(
    demo_mirrored: None, asgi_server: str, viewer: Any, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/migration/device-plugins/")
    section = page.locator('section[data-resource="example.com/gpu"]')
    section.wait_for()
    assert page.evaluate(BROKEN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    nodes = section.locator("table.plugin-nodes tbody tr td:first-child a.node-link")
    assert nodes.all_inner_texts() == ["legacy-00", "legacy-01"]
    assert nodes.first.get_attribute("href") == "/nodes/legacy-00/"
    pods = section.locator("table.pods tbody tr td:first-child a.pod-link")
    assert pods.count() == section.locator("table.pods tbody tr").count() > 0

    section.locator("form.removal-form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/whatif/[0-9a-f-]{36}/$"))
    run_id = page.url.rstrip("/").rsplit("/", 1)[1]
    worker = threading.Thread(target=whatif_run_execute, kwargs={"run_id": run_id})  # off Playwright's loop
    worker.start()
    worker.join(timeout=120)
    answer = page.locator("#plugin-removal-answer")
    answer.wait_for(timeout=30_000)
    # the names (pods, nodes, devices: the links) stay whole; a reason's words may wrap as prose does
    names = set(answer.locator("#plugin-removal-pods a.obj-link").all_inner_texts())
    assert len(names) > 10
    assert [b for b in page.evaluate(BROKEN) if b.split(": ", 1)[1].rsplit(" on ", 1)[0] in names] == []
    rows = answer.locator("#plugin-removal-pods tbody tr")
    assert (
        rows.count() == answer.locator("#plugin-removal-pods tbody tr td:first-child a.pod-link").count() > 0
    )
