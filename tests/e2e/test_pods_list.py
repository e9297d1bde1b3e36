"""The Pods list in a real browser against simcluster: the nav leads to it, the namespace filter narrows it
(in the URL), a pod the cluster starts appears without a reload, and a claim link opens the claim's page."""

from __future__ import annotations

import re
from typing import Any

import pytest

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_operator_filters_the_pods_by_namespace_and_follows_a_claim(
    mirror: MirrorHandle, simcluster: Any, viewer: Any, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/claims/")
    page.locator("#main-nav a", has_text="Pods").click()
    page.wait_for_url(f"{asgi_server}/pods/")
    rows = page.locator("#pods-list tbody tr[data-pod]")
    expect(rows.first).to_be_visible()
    namespaces = set(
        page.eval_on_selector_all(
            "#pods-list tbody tr[data-pod]", "rs => rs.map(r => r.dataset.pod.split('/')[0])"
        )
    )
    assert {"ml", "default", "research"} <= namespaces

    page.fill("form.filters input[name=namespace]", "ml")
    page.locator("form.filters button[type=submit]").click()
    page.wait_for_url(re.compile(r"/pods/\?.*namespace=ml"))
    shown = page.eval_on_selector_all("#pods-list tbody tr[data-pod]", "rs => rs.map(r => r.dataset.pod)")
    assert shown and all(p.startswith("ml/") for p in shown), shown
    expect(page.locator("form.filters input[name=namespace]")).to_have_value("ml")

    # The cluster starts another pod in ml: the filtered list shows it without a reload.
    simcluster.store.create(
        "pods",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late-arrival", "namespace": "ml"},
         "spec": {"containers": [{"name": "main", "image": "registry.example.com/idle:1"}]}},
        namespace="ml",
    )  # fmt: skip
    expect(page.locator('#pods-list tr[data-pod="ml/late-arrival"]')).to_be_visible(timeout=20_000)
    assert "namespace=ml" in page.url

    link = page.locator("#pods-list tr[data-pod^='ml/trainer-'] a.claim-link").first
    claim = link.inner_text()
    link.click()
    page.wait_for_url(re.compile(rf"/claims/ml/{re.escape(claim)}/$"))
    expect(page.locator("h1")).to_contain_text(claim)


def test_a_pending_pod_says_why_it_waits_at_desktop_and_phone_width(
    mirror: MirrorHandle, simcluster: Any, viewer: Any, asgi_server: str, browser: Any
) -> None:
    """tiny's too-big asks for 8 GPUs on one node: the scheduler's words are under its status, three lines at
    most on a desktop and no wider than the status column was (all of them in the title), on screen in the
    phone's card."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username, start="/pods/?waiting=true")
    why = page.locator('#pods-list tr[data-pod="research/too-big"] td[data-phase] .pod-waiting')
    expect(why).to_contain_text("Unschedulable: 0/3 nodes are available: 3 cannot allocate all claims.")
    # The message widens nothing: the status column is as wide as its badge and READY make it.
    cell = page.locator('#pods-list tr[data-pod="research/too-big"] td[data-phase]')
    widths = cell.evaluate(
        """td => { const w = td.getBoundingClientRect().width; const why = td.querySelector('.pod-waiting');
                   why.style.display = "none"; const without = td.getBoundingClientRect().width;
                   why.style.display = "";
                   return [w, without]; }"""
    )
    assert abs(widths[0] - widths[1]) < 1, widths
    title = why.get_attribute("title") or ""
    assert title.startswith("Unschedulable: 0/3 nodes are available") and title.endswith("for scheduling.")
    line = float(why.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 18"))
    box = why.bounding_box()
    assert box and box["height"] <= 3 * line + 1, (box, line)
    assert why.evaluate("e => e.scrollHeight > e.clientHeight"), "the rest is cut, not spilled"

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(why).to_contain_text("Preemption is not helpful for scheduling.")
    assert not why.evaluate("e => e.scrollHeight > e.clientHeight"), "the card shows all of it"
    box = why.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
