"""Device maintenance in a real browser: an operator drains the GPUs of one node — select, preview,
enforce NoExecute with the typed confirmation, watch the evictions and replacements live, undo; the
whole-cluster accident cannot happen by accident; a second tab never offers a stale action; a viewer
cannot author."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from allocation.supervisor import start_embedded_worker, stop_embedded_worker
from inventory.kube import connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from simcluster.testing import run_simcluster
from tests.e2e.browser_helpers import log_in, user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

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


@pytest.fixture
def operator() -> User:
    return user("oscar", "operator")


@pytest.fixture
def viewer() -> User:
    return user("vicky", "viewer")


def busiest_gpu_node(cluster: Any) -> str:
    counts: dict[str, int] = {}
    for claim in cluster.store.list("resourceclaims"):
        for result in claim.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []):
            if result["driver"] == GPU and claim["status"].get("reservedFor"):
                counts[result["pool"]] = counts.get(result["pool"], 0) + 1
    return max(counts, key=lambda n: counts[n])


def fill_taint(page: Any, title: str) -> None:
    page.fill("input[name=title]", title)
    page.fill("input[name=reason]", "PSU replacement")
    page.fill("input[name=ticket]", "OPS-42")
    page.fill("input[name=key]", "example.com/maintenance")
    page.fill("input[name=value]", "psu")
    page.select_option("select[name=effect]", "NoExecute")


def bar_fill(page: Any) -> float:
    return float(
        page.evaluate(
            """() => document.getElementById('progress-bar').getBoundingClientRect().width /
                     document.getElementById('progress-track').getBoundingClientRect().width"""
        )
    )


def post_json(page: Any, url: str, body: dict[str, Any]) -> Any:
    return page.evaluate(
        """async ([url, body]) => {
            const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrftoken='));
            const r = await fetch(url, {method: 'POST', credentials: 'same-origin',
              headers: {'Content-Type': 'application/json', 'X-CSRFToken': csrf ? csrf.split('=')[1] : ''},
              body: JSON.stringify(body)});
            return {status: r.status, body: await r.json()};
        }""",
        [url, body],
    )


def test_it_drains_a_node_from_the_ui_and_undoes_it(
    cluster: Any, mirror_and_worker: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    node = busiest_gpu_node(cluster)
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, operator.username, start="/maintenance/")

    # Select the GPUs of one node with the inventory's filters: nothing is ticked until the operator ticks.
    page.click("#new-maintenance")
    page.fill("#device-filters input[name=node]", node)
    page.select_option("#device-filters select[name=driver]", GPU)
    page.click("#device-filters button[type=submit]")
    expect(page.locator("#selection-table tbody tr")).not_to_have_count(0)
    expect(page.locator("#selected-count")).to_have_text("Nothing is selected yet")
    expect(page.locator("#selection-status")).to_contain_text(
        "Nothing is selected yet: tick devices below, or select all matching devices.", use_inner_text=True
    )
    page.check("#tick-page")
    rows = page.locator("#selection-table tbody input[name=device]").count()
    expect(page.locator("#selected-count")).to_have_text(f"{rows} devices are selected")
    status = page.locator("#selection-status")
    expect(status).to_contain_text(f"{rows} devices are selected.", use_inner_text=True)
    expect(status).not_to_contain_text("tick devices below", use_inner_text=True)
    expect(page.locator("#partial-selection")).to_be_hidden()  # every matching device is ticked
    first = page.locator("#selection-table tbody input[name=device]").first
    first.uncheck()  # one fewer than match: the page says the rest is not selected
    expect(page.locator("#partial-selection")).to_be_visible()
    expect(page.locator("#partial-selection")).to_contain_text(
        f"Only the {rows - 1} ticked devices go into the draft: 1 more match these filters"
    )
    first.check()
    expect(page.locator("#partial-selection")).to_be_hidden()
    fill_taint(page, f"Drain {node}")
    page.click("#create-draft")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#rules-yaml")).to_contain_text(f"pool: {node}")
    expect(page.locator("#kubectl-command")).to_contain_text("kubectl apply --server-side")
    expect(page.locator("#enforce-NoExecute")).to_be_disabled()
    # A draft evicts nothing: no empty progress bar, a note saying when evictions will show.
    expect(page.locator("#progress-live")).to_have_attribute("data-state", "live", timeout=10_000)
    expect(page.locator("#progress-title")).to_have_text("Timeline")
    expect(page.locator("#progress-draft-note")).to_be_visible()
    expect(page.locator("#noexecute-progress")).to_be_hidden()

    # Preview: the what-if runs in the worker and the actions redraw by themselves when it is done.
    page.click("#run-preview")
    expect(page.locator("#blast-radius")).to_be_visible(timeout=30_000)
    pods = int(page.locator("#blast-radius").get_attribute("data-pods") or "0")
    assert pods > 0
    expect(page.locator("#blast-NoExecute")).to_contain_text(f"{pods} pod")
    expect(page.locator("#blast-NoExecute")).to_contain_text("stay evicted even after an undo")

    # Enforce NoExecute: the checkbox and the number of pods, typed.
    form = page.locator("#enforce-NoExecute-form")
    phrase = form.get_attribute("data-phrase")
    assert phrase == str(pods)
    form.locator("input.enforce-confirm").check()
    expect(page.locator("#enforce-NoExecute")).to_be_disabled()
    form.locator("input.enforce-typed").fill(phrase)
    expect(page.locator("#enforce-NoExecute")).to_be_enabled()
    page.click("#enforce-NoExecute")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#progress-live")).to_have_attribute("data-state", "live", timeout=10_000)
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#progress-title")).to_have_text("Eviction progress (NoExecute)")
    expect(page.locator("#progress-draft-note")).to_be_hidden()
    expect(page.locator("#progress-counts")).to_have_attribute("data-complete", "true", timeout=30_000)
    expect(page.locator("#progress-counts")).to_have_attribute("data-evicted", str(pods))
    expect(page.locator("#progress-counts")).to_contain_text(f"{pods} of {pods} evicted · ")
    expect(page.locator("#progress-pods tbody")).to_contain_text("running on", timeout=30_000)
    expect(page.locator("#progress-rules")).to_contain_text("EvictionInProgress", timeout=30_000)
    assert abs(bar_fill(page) - 1.0) < 0.01, "the fill matches the counts"
    assert page.evaluate("window.__sameDocument === true"), "progress must arrive without a reload"

    # Undo says what it does not undo, then undoes the whole maintenance in one action.
    expect(page.locator("#undo-consequences")).to_contain_text(f"{pods} pod")
    expect(page.locator("#undo-consequences")).to_contain_text("stay evicted")
    expect(page.locator("#undo-consequences")).to_contain_text("Replacements:", timeout=30_000)
    page.click("#undo-delete")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#m-state")).to_have_text("undone")
    expect(page.locator("#undo-consequences")).to_contain_text("stay evicted")
    assert cluster.store.list("devicetaintrules") == []

    # The audit log has the whole story, and it is live: a new entry appears without a reload.
    maintenance_id = page.url.rstrip("/").rsplit("/", 1)[1]
    page.goto(f"{asgi_server}/maintenance/audit/")
    for label in ("draft created", "preview result", "confirmed", "rule created", "pod evicted", "undone"):
        # as long as the other waits: under CI load a live refresh of the table can be in flight
        expect(page.locator("#audit-table")).to_contain_text(label, timeout=30_000)
    expect(page.locator("#audit-table tr[data-action=refused]")).to_have_count(0)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=10_000)
    page.evaluate("window.__sameDocument = true")
    late = post_json(page, f"/api/maintenance/{maintenance_id}/undo/", {"mode": "delete"})
    assert late["status"] == 409 and late["body"]["current"]["state"] == "undone"
    expect(page.locator("#audit-table tr[data-action=refused]")).to_have_count(1, timeout=10_000)
    assert page.evaluate("window.__sameDocument === true")


def test_it_cannot_take_the_whole_cluster_out_by_accident(
    cluster: Any, mirror_and_worker: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, operator.username, start="/maintenance/new/")
    total = int(page.locator("#select-all-count").inner_text())
    expect(page.locator("#selection-status")).to_contain_text("this is every device in the cluster")
    expect(page.locator("#selected-count")).to_have_text("Nothing is selected yet")
    assert page.locator("input:checked").count() == 0

    # "Create draft" with nothing selected creates nothing.
    fill_taint(page, "Everything")
    page.click("#create-draft")
    expect(page.locator("#form-errors")).to_contain_text("nothing is selected")
    assert "/maintenance/new/" in page.url

    # Selecting everything is an explicit act that shows what it spans.
    expect(page.locator("#select-all-scope")).to_contain_text("3 nodes")
    expect(page.locator("#select-all-scope")).to_contain_text("gpu.example.com, nic.example.com")
    page.check("#select-all")
    expect(page.locator("#selected-count")).to_have_text(f"All {total} matching devices are selected")
    page.click("#create-draft")
    page.wait_for_url("**/maintenance/m*/")
    maintenance_id = page.url.rstrip("/").rsplit("/", 1)[1]

    # No enforcing without a preview — not from the page, not through the API.
    expect(page.locator("#enforce-NoExecute")).to_be_disabled()
    refused = post_json(
        page, f"/api/maintenance/{maintenance_id}/apply/", {"effect": "NoExecute", "confirm": True}
    )
    assert refused["status"] == 409 and refused["body"]["errors"][0]["field"] == "preview"
    page.click("#run-preview")
    expect(page.locator("#blast-radius")).to_be_visible(timeout=30_000)

    form = page.locator("#enforce-NoExecute-form")
    phrase = f"every device in the cluster: {total}"
    assert form.get_attribute("data-phrase") == phrase
    expect(page.locator("#blast-NoExecute")).to_contain_text(f"every device in the cluster ({total})")
    form.locator("input.enforce-confirm").check()
    form.locator("input.enforce-typed").fill("I understand")
    expect(page.locator("#enforce-NoExecute")).to_be_disabled()
    # The page only helps: force the submission with the wrong phrase and the server still refuses.
    page.evaluate("document.getElementById('enforce-NoExecute-form').submit()")
    page.wait_for_load_state()
    expect(page.locator("#apply-errors")).to_contain_text(f'type "{phrase}"')
    assert cluster.store.list("devicetaintrules") == []

    page.goto(f"{asgi_server}/maintenance/{maintenance_id}/")
    form = page.locator("#enforce-NoExecute-form")
    form.locator("input.enforce-confirm").check()
    form.locator("input.enforce-typed").fill(phrase.upper())
    page.click("#enforce-NoExecute")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#m-effect")).to_have_text("NoExecute")
    assert len(cluster.store.list("devicetaintrules")) > 0
    page.click("#undo-delete")
    expect(page.locator("#m-state")).to_have_text("undone")


def test_it_keeps_a_second_tab_truthful(
    cluster: Any, mirror_and_worker: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    first = context.new_page()
    log_in(
        first, asgi_server, operator.username, start="/maintenance/new/?node=node-0&driver=gpu.example.com"
    )
    first.check("#select-all")
    fill_taint(first, "Two tabs")
    first.click("#create-draft")
    first.wait_for_url("**/maintenance/m*/")
    first.click("#apply-none")
    first.wait_for_url("**/maintenance/m*/")
    expect(first.locator("#m-effect")).to_have_text("None")

    second = context.new_page()
    second.goto(first.url)
    expect(second.locator("#progress-live")).to_have_attribute("data-state", "live", timeout=10_000)
    expect(second.locator("#undo-delete")).to_be_visible()
    # Keep the form as it is now, as a click that lands before the page has caught up would send it.
    second.evaluate("window.__staleUndo = document.querySelector('#undo-delete').form.cloneNode(true)")

    first.click("#undo-delete")
    first.wait_for_url("**/maintenance/m*/")
    expect(first.locator("#m-state")).to_have_text("undone")

    # The second tab follows by itself: the state, and no button for what no longer applies.
    expect(second.locator("#m-state")).to_have_text("undone", timeout=10_000)
    expect(second.locator("#undo-delete")).to_have_count(0)
    expect(second.locator("#run-preview")).to_have_count(0)
    expect(second.locator("#undo-consequences")).to_contain_text("Undone by oscar")

    # And the late click is answered with the truth, not with "the cluster refused".
    second.evaluate("document.body.append(window.__staleUndo); window.__staleUndo.submit()")
    second.wait_for_load_state()
    expect(second.locator("#error-headline")).to_have_text(
        "This maintenance is no longer in the state this page showed; nothing was done."
    )
    expect(second.locator("#apply-errors")).to_contain_text("is undone")
    expect(second.locator("#apply-errors")).not_to_contain_text("The cluster refused")
    expect(second.locator("#undo-delete")).to_have_count(0)
    context.close()


def test_it_hides_authoring_from_a_viewer_and_the_api_refuses(
    cluster: Any, mirror_and_worker: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username, start="/maintenance/")
    expect(page.locator("#new-maintenance")).to_have_count(0)
    status = post_json(page, "/api/maintenance/", {"title": "t", "reason": "r", "key": "example.com/m", "effect": "NoExecute",
                       "devices": [{"driver": "gpu.example.com", "pool": "node-0", "device": "gpu-0"}]})  # fmt: skip
    assert status["status"] == 403
    response = page.goto(f"{asgi_server}/maintenance/new/")
    assert response is not None and response.status == 403
