"""The eviction progress table links each pod, each of its claims and its replacement to their pages, as
every other page links the names it shows: they were plain text, so following an evicted pod's replacement
meant searching for it. The names stay whole ("trainer-" / "0" never breaks at a hyphen), and are text, not
markup: a claim called `<b>x</b>` would read as such."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from maintenance.models import Maintenance
from maintenance.planning import DeviceRef
from tests.e2e.browser_helpers import log_in, user
from tests.inventory import factories as f
from tests.maintenance.support import GPU, create

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

OWNER = "11111111-2222-3333-4444-555555555555"


def stamp(moment: Any) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def evicted(asgi_server: str) -> str:
    """A maintenance enforced with NoExecute 2 min ago: pod ml/trainer-0 was evicted, and its ReplicaSet's
    replacement ml/trainer-1 runs on node-1."""
    f.write(("resourceslices", f.resource_slice("node-0-gpu", devices=[f.gpu("gpu-0")])))
    now = timezone.now()
    owner = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "trainer", "uid": OWNER, "controller": True}
    ]
    replacement = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": f.meta("trainer-1", namespace="ml", ownerReferences=owner,
                                      creationTimestamp=stamp(now - timedelta(minutes=1))),
                   "spec": {"containers": [{"name": "main"}], "nodeName": "node-1"}, "status": {"phase": "Running"}}  # fmt: skip
    f.write(("pods", replacement))
    oscar = user("oscar", "operator")
    m = create(oscar, devices=[DeviceRef(GPU, "node-0", "gpu-0")])
    Maintenance.objects.filter(pk=m.pk).update(
        state=Maintenance.APPLIED, applied_effect="NoExecute", enforced_at=now - timedelta(minutes=2),
        affected=[{"uid": f.uid(), "namespace": "ml", "name": "trainer-0", "owner_uid": OWNER,
                   "owner": "ReplicaSet/trainer", "labels": {}, "claims": ["ml/trainer-0-gpu", "ml/<b>x</b>"],
                   "evict_at": stamp(now - timedelta(minutes=2))}],
    )  # fmt: skip
    return m.id


def test_the_eviction_table_links_each_pod_claim_and_replacement_to_its_page(
    evicted: str, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844})
    log_in(page, asgi_server, "oscar", start=f"/maintenance/{evicted}/")
    row = page.locator("#progress-pods tbody tr")
    expect(row.locator("td").nth(4)).to_contain_text("trainer-1", timeout=10_000)

    links = row.locator("a").evaluate_all(
        "(as) => as.map((a) => [a.closest('td').cellIndex, a.textContent, a.getAttribute('href')])"
    )
    assert links == [
        [0, "ml/trainer-0", "/pods/ml/trainer-0/"],
        [1, "ml/trainer-0-gpu", "/claims/ml/trainer-0-gpu/"],
        [1, "ml/<b>x</b>", "/claims/ml/%3Cb%3Ex%3C%2Fb%3E/"],
        [4, "trainer-1", "/pods/ml/trainer-1/"],
        [4, "node-1", "/nodes/node-1/"],
    ]
    assert row.locator("b").count() == 0  # the claim's name is text, never markup
    assert row.locator("td").nth(4).inner_text() == "trainer-1 · running on node-1"
    # each name on one line at phone width: a word is kept whole in its cell. The table is redrawn every
    # second (the countdowns), so the lines are counted on a drawn table, waiting for one if need be.
    lines = "() => [...document.querySelectorAll('#progress-pods tbody tr a')].map((a) => a.getClientRects().length)"
    page.wait_for_function(
        f"() => ({lines})().length === 5 && ({lines})().every((n) => n > 0)", timeout=10_000
    )
    assert page.evaluate(lines) == [1, 1, 1, 1, 1]
    page.locator("#progress-pods a", has_text="trainer-1").click()
    page.wait_for_url(f"{asgi_server}/pods/ml/trainer-1/")
