"""Device plugin → DRA in a real browser, on the demo topology as simcluster's scheduler placed it: the
assistant shows which pods a device plugin serves (and would move to DRA), the node where both backends
would serve example.com/gpu, and its what-if answers, per pod, whether they still fit once the plugin is
gone and where."""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest

from allocation.services import whatif_run_execute
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_it_walks_the_assistant_to_which_pods_move_to_dra_and_whether_they_fit(
    demo_mirrored: None, asgi_server: str, viewer: Any, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/migration/device-plugins/")
    section = page.locator('section[data-resource="example.com/gpu"]')
    section.wait_for()
    assert "DRA: gpu.example.com (explicit)" in section.locator("h2").inner_text()
    assert "6 would move to DRA" in section.locator("h2").inner_text()
    assert "legacy-01" in section.locator(".both-backends").inner_text()
    plugin_rows = section.locator('table.pods tr[data-backend="device plugin"]')
    assert plugin_rows.count() == 5
    assert all("moves to DRA" in t for t in plugin_rows.all_inner_texts())
    assert section.locator('table.pods tr[data-backend="pending"]').count() == 1
    assert section.locator('table.pods tr[data-backend="DRA"]').count() == 3
    nodes = section.locator("table.plugin-nodes tbody tr").all_inner_texts()
    assert [n.split("\t")[0] for n in nodes] == ["legacy-00", "legacy-01"]
    assert "Kueue" in page.locator("#quota-note").inner_text()

    section.locator("form.removal-form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/whatif/[0-9a-f-]{36}/$"))
    run_id = page.url.rstrip("/").rsplit("/", 1)[1]
    # what the worker process does with the pending run (in a thread: Playwright's loop owns this one)
    worker = threading.Thread(target=whatif_run_execute, kwargs={"run_id": run_id})
    worker.start()
    worker.join(timeout=120)
    answer = page.locator("#plugin-removal-answer")
    answer.wait_for(timeout=30_000)  # the run page reloads itself when the run has finished
    assert answer.get_attribute("data-all-fit") == "false"
    assert "No:" in answer.locator("h2").inner_text()
    rows = answer.locator("#plugin-removal-pods tbody tr")
    assert rows.count() == 6
    fits = answer.locator('#plugin-removal-pods tr[data-fits="true"]')
    misfits = answer.locator('#plugin-removal-pods tr[data-fits="false"]')
    assert fits.count() >= 1 and misfits.count() >= 1
    for text in fits.all_inner_texts():
        assert "DRA on legacy-01" in text and "gpu.example.com/legacy-01/gpu-" in text
    for text in misfits.all_inner_texts():
        assert "does not fit" in text and "not enough devices through DRA" in text
    page.close()
