"""Device maintenance in a real browser: an operator drains the GPUs of one node — select, preview,
enforce NoExecute, watch the evictions and replacements live, undo — and a viewer cannot author."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from allocation.worker import start_embedded_worker, stop_embedded_worker
from inventory.kube import connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from simcluster.testing import run_simcluster

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "e2e-password-2"
GPU = "gpu.example.com"


@pytest.fixture
def cluster(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(
        topology="tiny", kubeconfig_path=tmp_path / "kubeconfig", rule_status_period=0.5
    ) as c:
        assert c.controllers is not None and c.controllers.wait_idle(20)
        settings.DRADASH_KUBECONFIG = str(c.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        yield c


@pytest.fixture
def mirror_and_worker(cluster: Any) -> Iterator[MirrorHandle]:
    handle = Mirror(connect(str(cluster.kubeconfig_path))).start()
    assert wait_for_sync(handle, timeout=30), "the mirror did not sync with simcluster"
    start_embedded_worker()
    yield handle
    stop_embedded_worker()
    handle.stop()


def user(name: str, group: str) -> User:
    u = User.objects.create_user(username=name, password=PASSWORD)
    u.groups.add(Group.objects.get_or_create(name=group)[0])
    return u


@pytest.fixture
def operator() -> User:
    return user("oscar", "operator")


@pytest.fixture
def viewer() -> User:
    return user("vicky", "viewer")


def log_in(page: Any, base: str, username: str, then: str) -> None:
    page.goto(f"{base}{then}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}{then}")


def busiest_gpu_node(cluster: Any) -> str:
    counts: dict[str, int] = {}
    for claim in cluster.store.list("resourceclaims"):
        for result in claim.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []):
            if result["driver"] == GPU and claim["status"].get("reservedFor"):
                counts[result["pool"]] = counts.get(result["pool"], 0) + 1
    return max(counts, key=lambda n: counts[n])


def test_it_drains_a_node_from_the_ui_and_undoes_it(
    cluster: Any, mirror_and_worker: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    node = busiest_gpu_node(cluster)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, operator.username, "/maintenance/")

    # Select the GPUs of one node with the inventory's filters.
    page.click("#new-maintenance")
    page.fill("#device-filters input[name=node]", node)
    page.fill("#device-filters input[name=driver]", GPU)
    page.click("#device-filters button[type=submit]")
    expect(page.locator("#selection-table tbody tr")).not_to_have_count(0)
    page.fill("input[name=title]", f"Drain {node}")
    page.fill("input[name=reason]", "PSU replacement")
    page.fill("input[name=ticket]", "OPS-42")
    page.fill("input[name=key]", "example.com/maintenance")
    page.fill("input[name=value]", "psu")
    page.select_option("select[name=effect]", "NoExecute")
    page.click("#create-draft")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#rules-yaml")).to_contain_text(f"pool: {node}")
    expect(page.locator("#kubectl-command")).to_contain_text("kubectl apply --server-side")

    # Preview: the what-if runs in the worker and the panel fills in by itself.
    page.click("#run-preview")
    expect(page.locator("#blast-radius")).to_be_visible(timeout=30_000)
    pods = int(page.locator("#blast-radius").get_attribute("data-pods") or "0")
    assert pods > 0
    expect(page.locator("#enforce-panel")).to_contain_text(f"{pods} pod")

    # Enforce NoExecute after the explicit confirmation; watch the progress reach completion live.
    page.check("#enforce-confirm")
    page.select_option("#enforce-effect", "NoExecute")
    page.click("#enforce")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#progress-live")).to_have_attribute("data-state", "live", timeout=10_000)
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#progress-counts")).to_have_attribute("data-complete", "true", timeout=30_000)
    expect(page.locator("#progress-counts")).to_have_attribute("data-gone", str(pods))
    expect(page.locator("#progress-pods tbody")).to_contain_text("running on", timeout=30_000)
    expect(page.locator("#progress-rules")).to_contain_text("EvictionInProgress", timeout=30_000)
    assert page.evaluate("window.__sameDocument === true"), "progress must arrive without a reload"

    # Undo the whole maintenance in one action.
    page.click("#undo-delete")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#m-state")).to_have_text("undone")
    assert cluster.store.list("devicetaintrules") == []


def test_it_hides_authoring_from_a_viewer_and_the_api_refuses(
    cluster: Any, mirror_and_worker: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, "/maintenance/")
    expect(page.locator("#new-maintenance")).to_have_count(0)
    status = page.evaluate(
        """async () => {
            const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrftoken='));
            const r = await fetch('/api/maintenance/', {method: 'POST', credentials: 'same-origin',
              headers: {'Content-Type': 'application/json', 'X-CSRFToken': csrf ? csrf.split('=')[1] : ''},
              body: JSON.stringify({title: 't', reason: 'r', key: 'example.com/m', effect: 'NoExecute',
                                    devices: [{driver: 'gpu.example.com', pool: 'node-0', device: 'gpu-0'}]})});
            return r.status;
        }"""
    )
    assert status == 403
    response = page.goto(f"{asgi_server}/maintenance/new/")
    assert response is not None and response.status == 403
