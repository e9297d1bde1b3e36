"""A detail page whose object is deleted while it is open says the object is gone: its live refresh answers
404, which read "Could not refresh (the server answered 404 …)", as if the server had failed, beside the
deleted DeviceTaintRule still shown with its effect."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from inventory.models import KubeObject
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RULE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "fw-node-3", "uid": "u-fw-node-3", "resourceVersion": "7"},
    "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "node-3"},
             "taint": {"key": "example.com/maintenance", "value": "fw", "effect": "NoExecute"}},
}  # fmt: skip

REFRESH = """() => new Promise((done) => {
  const settle = () => done();
  document.body.addEventListener("htmx:responseError", settle, { once: true });
  document.body.addEventListener("htmx:afterSettle", settle, { once: true });
  document.getElementById("taint-rule-body").dispatchEvent(new CustomEvent("live-refresh"));
})"""


def _in_a_thread(work: Any) -> None:
    """The ORM off the test thread, where Playwright's event loop runs."""
    worker = threading.Thread(target=work)
    worker.start()
    worker.join()


@pytest.fixture
def rule(transactional_db: None) -> None:
    KubeObject.objects.create(kind="devicetaintrules", uid="u-fw-node-3", name="fw-node-3", raw=RULE)


def test_a_rule_deleted_while_its_page_is_open_reads_as_deleted(
    rule: None, viewer: Any, asgi_server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/taint-rules/fw-node-3/")
    page.wait_for_load_state("networkidle")
    _in_a_thread(lambda: KubeObject.objects.filter(kind="devicetaintrules", name="fw-node-3").delete())
    page.evaluate(REFRESH)
    note = page.locator("#taint-rule-body .live-error")
    assert note.inner_text().startswith("No longer in the cluster (deleted"), note.inner_text()
    assert "Could not refresh" not in note.inner_text()
