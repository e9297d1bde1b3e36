"""The operator's first question, in a real browser: log in, filter the devices, watch a taint appear live."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from inventory.mirror.runner import MirrorHandle
from tests.e2e.browser_helpers import log_in
from tests.kubectl import run_kubectl

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RULE_YAML = """
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: e2e-maintenance
spec:
  deviceSelector: {driver: gpu.example.com, pool: node-1, device: gpu-2}
  taint: {key: example.com/e2e-maintenance, value: firmware, effect: NoSchedule}
"""


def test_it_shows_a_new_taint_rule_on_the_filtered_device_row_without_reload(
    simcluster: Any, mirror: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username)

    # Filter by node through the form: the filters land in the URL and the table shows only node-1.
    page.fill("input[name=node]", "node-1")
    page.select_option("select[name=driver]", "gpu.example.com")
    page.click("#device-filters button[type=submit]")
    page.wait_for_url("**/devices/?*node=node-1*")
    row = page.locator('.tabulator-row[data-device="gpu.example.com/node-1/gpu-2"]')
    expect(row).to_be_visible(timeout=10_000)
    expect(page.locator(".tabulator-row")).to_have_count(4)
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=10_000)
    expect(row).not_to_contain_text("e2e-maintenance")
    page.evaluate("window.__sameDocument = true")

    result = run_kubectl(simcluster.kubeconfig_path, "apply", "-f", "-", input_text=RULE_YAML)
    assert result.returncode == 0, result.stderr

    expect(row.locator(".badge.taint")).to_contain_text(
        "example.com/e2e-maintenance=firmware:NoSchedule", timeout=10_000
    )
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"
    other = page.locator('.tabulator-row[data-device="gpu.example.com/node-1/gpu-1"]')
    expect(other).not_to_contain_text("e2e-maintenance")

    result = run_kubectl(simcluster.kubeconfig_path, "delete", "devicetaintrule", "e2e-maintenance")
    assert result.returncode == 0, result.stderr
    expect(row).not_to_contain_text("e2e-maintenance", timeout=10_000)


def test_it_falls_back_to_polling_when_the_socket_is_not_used(
    simcluster: Any, mirror: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username)
    page.goto(f"{asgi_server}/taint-rules/?live=poll")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "polling")
    expect(page.locator("#taint-rules-body")).to_contain_text("No DeviceTaintRules")

    result = run_kubectl(simcluster.kubeconfig_path, "apply", "-f", "-", input_text=RULE_YAML)
    assert result.returncode == 0, result.stderr

    expect(page.locator("#taint-rules-body")).to_contain_text("e2e-maintenance", timeout=15_000)


CLAIM_YAML = """
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: e2e-claim
  namespace: ml
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
"""


def test_it_shows_a_new_claim_on_the_open_claims_page(
    simcluster: Any, mirror: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page()
    log_in(page, asgi_server, viewer.username)
    page.goto(f"{asgi_server}/claims/?namespace=ml")
    expect(page.locator("#live-status")).to_have_attribute("data-state", "live", timeout=10_000)
    expect(page.locator("#claims-table")).not_to_contain_text("e2e-claim")
    page.evaluate("window.__sameDocument = true")

    result = run_kubectl(simcluster.kubeconfig_path, "apply", "-f", "-", input_text=CLAIM_YAML)
    assert result.returncode == 0, result.stderr

    expect(page.locator("#claims-table")).to_contain_text("e2e-claim", timeout=10_000)
    assert page.evaluate("window.__sameDocument === true"), "the page was reloaded"


def test_the_device_count_explains_refused_filters_and_an_attribute_that_matches_nothing(
    simcluster: Any, mirror: MirrorHandle, viewer: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    log_in(page, asgi_server, viewer.username)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{asgi_server}/devices/?state=bogus")
    expect(page.locator(".alert.bad")).to_contain_text("Allocation (state):")
    count = page.locator("#device-count")
    expect(count).to_have_text("No devices shown: these filters cannot be used (see above).")
    expect(page.locator("#devices-table .tabulator-row")).to_have_count(0)
    assert not any("Ajax Load Error" in e for e in errors), errors  # nothing was fetched only to fail

    # An attribute filter that matches nothing says how values compare.
    page.goto(f"{asgi_server}/devices/?attribute=model%3Dh100-lowercase")
    expect(count).to_have_text("0 devices match (an attribute's value is matched exactly, case included)")
