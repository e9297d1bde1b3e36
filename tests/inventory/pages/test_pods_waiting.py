"""Why a pod waits, on the Pods list: under a pending pod's status the scheduler's reason and message (two
lines, the whole text in the title), the gates a gated pod waits for, escaped as every cluster string; the
counts link to the waiting pods, `?waiting=true` lists them, and the pod's page says it in full."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages.test_pods_list import JSON, PODS, client_in, names, pod, row

pytestmark = pytest.mark.django_db
__all__ = ["client_in"]  # the fixture, imported

NO_FIT = (
    "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: 0/3 nodes are "
    "available: 3 Preemption is not helpful for scheduling."
)


def unschedulable(message: str) -> JSON:
    return {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}


@pytest.fixture
def pods() -> None:
    f.write(
        pod("too-big", namespace="research", phase="Pending", conditions=[unschedulable(NO_FIT)],
            claims=[{"name": "gpus", "resourceClaimTemplateName": "eight-gpus"}],
            generated=[{"name": "gpus", "resourceClaimName": "too-big-gpus-zgwcx"}]),
        pod("gated", phase="Pending", gates=["example.com/quota"],
            conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
                         "message": "Scheduling is blocked due to non-empty scheduling gates"}]),
        pod("trainer-0", node="node-1", conditions=[{"type": "Ready", "status": "True"}],
            statuses=[{"name": "main", "ready": True, "restartCount": 0, "state": {"running": {}}}]),
    )  # fmt: skip


def test_it_shows_why_a_pending_pod_waits_under_its_status(client_in: Client, pods: None) -> None:
    html = client_in.get(PODS).content.decode()
    too_big = row(html, "too-big")
    assert (
        f'<div class="pod-waiting small muted" title="Unschedulable: {NO_FIT}">'
        '<span class="pod-waiting-reason"><bdi class="k8s word">Unschedulable</bdi></span>: '
        f'<bdi class="k8s">{NO_FIT}</bdi></div>'
    ) in too_big
    assert too_big.index(
        '<span class="badge warn"><bdi class="k8s word">Pending</bdi></span>'
    ) < too_big.index("pod-waiting")
    # STATUS already says SchedulingGated: only which gates.
    gated = row(html, "gated")
    assert '<span class="badge warn"><bdi class="k8s word">SchedulingGated</bdi></span>' in gated
    assert "pod-waiting-reason" not in gated
    assert (
        '<bdi class="k8s">waiting for scheduling gates to be removed: example.com/quota</bdi></div>' in gated
    )
    assert "pod-waiting" not in row(html, "trainer-0")


def test_it_escapes_what_the_scheduler_says_in_the_text_and_the_title(client_in: Client) -> None:
    hostile = '"><script>alert(1)</script>'
    f.write(pod("odd", phase="Pending", conditions=[unschedulable(hostile)]))
    odd = row(client_in.get(PODS).content.decode(), "odd")
    assert "<script>" not in odd
    escaped = "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"
    assert f'title="Unschedulable: {escaped}"' in odd
    assert f'<bdi class="k8s word">{escaped}</bdi></div>' in odd
    page = client_in.get("/pods/ml/odd/").content.decode()
    assert "<script>alert" not in page and escaped in page


def test_it_counts_the_waiting_pods_and_lists_them_with_waiting_true(client_in: Client, pods: None) -> None:
    html = client_in.get(PODS).content.decode()
    assert '<a href="/pods/?waiting=true">2 waiting</a>' in html
    waiting = client_in.get(PODS, {"waiting": "true"}).content.decode()
    assert names(waiting) == ["gated", "too-big"]
    assert '<select name="waiting"><option value="">any</option><option value="true" selected>' in waiting
    assert names(client_in.get(PODS, {"waiting": "false"}).content.decode()) == ["trainer-0"]
    refused = client_in.get(PODS, {"waiting": "maybe"})
    assert refused.status_code == 400
    assert re.search(
        r"<li><strong>Waiting</strong> \(<code>waiting</code>\): [^<]*must be true", refused.text
    )


def test_no_count_is_shown_when_no_pod_waits(client_in: Client) -> None:
    f.write(pod("web", node="node-1"))
    assert "waiting=true" not in client_in.get(PODS).content.decode()


def test_the_pods_page_says_why_it_waits_in_full(client_in: Client, pods: None) -> None:
    html = client_in.get("/pods/research/too-big/").content.decode()
    assert (
        '<dt>Waiting</dt><dd id="pod-waiting"><span class="badge warn"><bdi class="k8s word">Unschedulable</bdi>'
        f'</span> <bdi class="k8s">{NO_FIT}</bdi></dd>'
    ) in html
    assert 'id="pod-waiting"' not in client_in.get("/pods/ml/trainer-0/").content.decode()
