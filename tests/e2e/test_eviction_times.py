"""The eviction progress table says when each pod is (or was) evicted in the page's one time format, "in
4 min" / "2 min ago" with the UTC time on hover, as the timeline under it does: it showed the raw
"2026-12-04T14:32:22.781027Z", microseconds included."""

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


def stamp(moment: Any) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@pytest.fixture
def enforced(asgi_server: str) -> str:
    """A maintenance enforced with NoExecute 2 min ago: one pod evicted then (gone), one evicted in 4 min."""
    f.write(("resourceslices", f.resource_slice("node-0-gpu", devices=[f.gpu("gpu-0"), f.gpu("gpu-1")])))
    waiting = {"apiVersion": "v1", "kind": "Pod", "metadata": f.meta("slow", namespace="ml"),
               "spec": {"containers": [{"name": "main"}], "nodeName": "node-0"}, "status": {"phase": "Running"}}  # fmt: skip
    f.write(("pods", waiting))
    oscar = user("oscar", "operator")
    m = create(oscar, devices=[DeviceRef(GPU, "node-0", "gpu-0"), DeviceRef(GPU, "node-0", "gpu-1")])
    now = timezone.now()
    pod = {"owner_uid": "", "owner": "", "labels": {}}
    Maintenance.objects.filter(pk=m.pk).update(
        state=Maintenance.APPLIED, applied_effect="NoExecute", enforced_at=now - timedelta(minutes=2),
        affected=[
            {**pod, "uid": f.uid(), "namespace": "ml", "name": "fast", "claims": ["fast-gpu"],
             "evict_at": stamp(now - timedelta(minutes=2))},
            {**pod, "uid": waiting["metadata"]["uid"], "namespace": "ml", "name": "slow", "claims": ["slow-gpu"],
             "evict_at": stamp(now + timedelta(minutes=4, seconds=30))},
        ],
    )  # fmt: skip
    return m.id


def test_eviction_times_read_as_the_timeline_does(enforced: str, asgi_server: str, browser: Any) -> None:
    page = browser.new_page()
    log_in(page, asgi_server, "oscar", start=f"/maintenance/{enforced}/")
    rows = page.locator("#progress-pods tbody tr")
    rows.first.wait_for()
    times = {
        rows.nth(i).locator("td").first.inner_text(): rows.nth(i).locator("td").nth(3)
        for i in range(rows.count())
    }
    assert times["ml/fast"].inner_text() == "2 min ago"
    assert times["ml/slow"].inner_text() == "in 4 min"
    time = times["ml/slow"].locator("time")
    assert time.get_attribute("title").endswith(" UTC")
    assert "." not in time.get_attribute("datetime")
