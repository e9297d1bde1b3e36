"""Find anything from anything, in a real browser on simcluster's tiny world: search a pod from the header,
open its page, follow its device, see the pod from the device; the node page nests MIG partitions under
their GPU; a Devices filter becomes a new maintenance with nothing selected yet."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from inventory.kube import connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from simcluster.testing import run_simcluster
from tests.e2e.browser_helpers import log_in, user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

GPU = "gpu.example.com"


@pytest.fixture
def cluster(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as c:
        assert c.controllers is not None and c.controllers.wait_idle(20)
        settings.DRADASH_KUBECONFIG = str(c.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        yield c


@pytest.fixture
def mirror(cluster: Any) -> Iterator[MirrorHandle]:
    handle = Mirror(connect(str(cluster.kubeconfig_path))).start()
    assert wait_for_sync(handle, timeout=30), "the mirror did not sync with simcluster"
    yield handle
    handle.stop()


@pytest.fixture
def vera() -> User:
    return user("vera", "viewer")


@pytest.fixture
def oscar() -> User:
    return user("oscar", "operator")


def running_trainer(cluster: Any) -> tuple[str, str, str]:
    """(pod name, its claim, the device it holds) of a running trainer."""
    for pod in cluster.store.list("pods", namespace="ml"):
        statuses = pod.get("status", {}).get("resourceClaimStatuses") or []
        if pod["metadata"]["name"].startswith("trainer-") and pod["spec"].get("nodeName") and statuses:
            claim = cluster.store.get("resourceclaims", statuses[0]["resourceClaimName"], namespace="ml")
            (result,) = claim["status"]["allocation"]["devices"]["results"]
            return (
                pod["metadata"]["name"],
                claim["metadata"]["name"],
                f"{GPU}/{result['pool']}/{result['device']}",
            )
    raise AssertionError("the tiny world runs two trainers")


def test_it_finds_a_pod_and_walks_to_its_gpu_and_back(
    cluster: Any, mirror: MirrorHandle, vera: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    pod, claim, device = running_trainer(cluster)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, "vera", start="/")

    page.fill("#search-box-q", pod)
    page.press("#search-box-q", "Enter")
    page.wait_for_url("**/search/?q=*")
    hit = page.locator("#search-pods li.hit a")
    expect(hit).to_have_count(1)
    expect(page.locator("#search-pods li.hit")).to_contain_text("exact")
    hit.click()

    page.wait_for_url(f"**/pods/ml/{pod}/")
    expect(page.locator("#pod-phase")).to_have_text("Running")
    row = page.locator(f'#pod-claims tr[data-claim="{claim}"]')
    expect(row).to_contain_text(device)
    row.locator("a.device-link").click()

    page.wait_for_url(f"**/devices/{device}/")
    link = page.locator("a.pod-link", has_text=pod)
    expect(link).to_be_visible()
    link.click()
    page.wait_for_url(f"**/pods/ml/{pod}/")


def test_the_node_page_nests_the_mig_partitions_under_their_gpu(
    cluster: Any, mirror: MirrorHandle, vera: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, "vera", start="/nodes/")
    page.locator('#nodes-table tr[data-node="node-2"] a.node-link').click()
    page.wait_for_url("**/nodes/node-2/")

    gpu = page.locator(f'#node-numa li[data-device="{GPU}/node-2/gpu-3"]')
    expect(gpu).to_be_visible()
    partitions = gpu.locator("ul.partitions > li")
    expect(partitions).to_have_count(12)
    expect(partitions.first).to_contain_text("gpu-3-mig-")
    # A partition is not also listed at the top level of its NUMA node.
    expect(page.locator('#node-numa ul.device-tree > li[data-device$="mig-1g-0"]')).to_have_count(0)
    mig_pod = next(
        p["metadata"]["name"]
        for p in cluster.store.list("pods", namespace="research")
        if p["spec"].get("nodeName") == "node-2"
    )
    expect(page.locator("#node-pods")).to_contain_text(mig_pod)


def test_a_devices_filter_becomes_a_new_maintenance_with_nothing_selected(
    cluster: Any, mirror: MirrorHandle, oscar: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, "oscar", start="/devices/")
    page.fill("#device-filters input[name=node]", "node-1")
    page.select_option("#device-filters select[name=driver]", GPU)
    page.click("#device-filters button[type=submit]")
    page.wait_for_url("**/devices/?*node=node-1*")

    page.click("#out-of-service")
    page.wait_for_url("**/maintenance/new/?*")
    expect(page.locator("#device-filters input[name=node]")).to_have_value("node-1")
    expect(page.locator("#selected-count")).to_have_text("Nothing is selected yet")
    rows = page.locator("#selection-table tbody tr")
    expect(rows).to_have_count(4)  # node-1's four GPUs, and not its NIC
    expect(page.locator("#selection-table tbody input[name=device]:checked")).to_have_count(0)
