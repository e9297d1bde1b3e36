"""The PDB-aware drain in a real browser, on the demo topology: select the GPUs of the node running the
most ml/trainer pods → preview (the drain's waves and ETA) → "Drain, respecting PDBs" with the typed
confirmation → live progress per pod → complete, every replacement running elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from allocation.supervisor import start_embedded_worker, stop_embedded_worker
from inventory.kube import connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from maintenance import wake
from maintenance.driver import DrainDriver
from simcluster.testing import run_simcluster
from tests.e2e.browser_helpers import log_in, user
from tests.e2e.test_maintenance_flow import GPU, fill_taint
from tests.maintenance.drain_support import trainer_nodes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(
        topology="demo", kubeconfig_path=tmp_path / "kubeconfig", rule_status_period=0.5, batch_delay=0.2
    ) as c:
        assert c.controllers is not None and c.controllers.wait_idle(30)
        settings.DRADASH_KUBECONFIG = str(c.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        yield c


@pytest.fixture
def running(demo: Any) -> Iterator[MirrorHandle]:
    """The mirror, the what-if worker and a drain driver, as the demo runs them."""
    handle = Mirror(connect(str(demo.kubeconfig_path))).start()
    assert wait_for_sync(handle, timeout=30), "the mirror did not sync with simcluster"
    start_embedded_worker()
    driver = DrainDriver(every=0.5).start()
    wake.register(driver.wake)
    yield handle
    wake.unregister(driver.wake)
    driver.stop()
    stop_embedded_worker()
    handle.stop()


@pytest.fixture
def operator() -> User:
    return user("dora", "operator")


def test_it_drains_the_busiest_trainer_node_respecting_the_budget(
    demo: Any, running: MirrorHandle, operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    node = trainer_nodes(demo)[0]
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    log_in(page, asgi_server, operator.username, start="/maintenance/")

    page.click("#new-maintenance")
    page.fill("#device-filters input[name=node]", node)
    page.select_option("#device-filters select[name=driver]", GPU)
    page.click("#device-filters button[type=submit]")
    expect(page.locator("#selection-table tbody tr")).not_to_have_count(0)
    page.check("#tick-page")
    fill_taint(page, f"Drain {node}")
    page.select_option("select[name=effect]", "NoSchedule")
    page.click("#create-draft")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#drain-start")).to_be_disabled()

    # Preview: the drain form shows the waves and the ETA the budgets and the concurrency give.
    page.click("#run-preview")
    # The in-process worker shares the test's two cores: under a loaded CI machine the preview took > 30 s.
    expect(page.locator("#drain-blast")).to_be_visible(timeout=90_000)
    forecast = page.locator("#drain-forecast .drain-forecast:visible")
    expect(forecast).to_contain_text("wave")
    expect(forecast).to_contain_text("ETA about")
    expect(forecast).to_contain_text("ml/trainer")
    page.select_option("#drain-concurrency", "2")
    expect(page.locator("#drain-forecast .drain-forecast:visible")).to_contain_text("at concurrency 2")

    form = page.locator("#drain-form")
    phrase = form.get_attribute("data-phrase") or ""
    form.locator("input.enforce-confirm").check()
    if phrase:
        expect(page.locator("#drain-start")).to_be_disabled()
        form.locator("input.enforce-typed").fill(phrase)
    expect(page.locator("#drain-start")).to_be_enabled()
    page.click("#drain-start")
    page.wait_for_url("**/maintenance/m*/")

    # Progress: live, per pod, to the end; the rules keep NoSchedule.
    expect(page.locator("#drain-panel")).to_be_visible()
    expect(page.locator("#progress-live")).to_have_attribute("data-state", "live", timeout=10_000)
    page.evaluate("window.__sameDocument = true")
    expect(page.locator("#drain-budgets")).to_contain_text("ml/trainer", timeout=30_000)
    # one progress panel: the NoExecute one (nothing enforced with NoExecute) is folded away
    expect(page.locator("#noexecute-progress")).to_be_hidden()
    expect(page.locator("#progress-drain-note")).to_be_visible()
    expect(page.locator("#progress-title")).to_have_text("Timeline")
    expect(page.locator("#drain-summary")).to_have_attribute("data-complete", "true", timeout=60_000)
    assert page.evaluate("window.__sameDocument === true"), "progress must arrive without a reload"
    rows = page.locator("#drain-pods tbody tr")
    assert rows.count() > 0
    for i in range(rows.count()):
        expect(rows.nth(i)).to_have_attribute("data-state", "running")
        expect(rows.nth(i)).to_contain_text("replacement running")
    expect(page.locator("#drain-state")).to_have_text("complete")
    page.reload()
    expect(page.locator("#m-state")).to_have_text("applied")
    expect(page.locator("#m-effect")).to_have_text("NoSchedule")
