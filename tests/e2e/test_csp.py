"""The strict Content-Security-Policy in a real browser: every main page loads with no violation and no
script error (htmx, Chart.js, Tabulator and our own scripts all work without anything inline)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from allocation.services import whatif_run_create
from inventory.mirror.runner import MirrorHandle
from inventory.models import Device, KubeObject
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create
from tests.e2e.browser_helpers import log_in
from tests.e2e.ui_pages import MAIN_PAGES, console_watch, violations

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def detail_pages(mirror: MirrorHandle, operator: User) -> list[str]:
    """A maintenance draft and a what-if run (pending: its page runs the live-progress script)."""
    device = Device.objects.order_by("driver", "pool", "name").first()
    assert device is not None
    m = maintenance_create(
        user=operator,
        draft=Draft(title="csp", reason="csp", ticket="", key="example.com/m", value="", effect="NoSchedule",
                    devices=[DeviceRef(device.driver, device.pool, device.name)], filters={}),
    )  # fmt: skip
    run = whatif_run_create(
        kind="headroom", input={"source": "class", "deviceClassName": device.driver}, user=operator
    )
    pod = next(
        p for p in KubeObject.objects.filter(kind="pods").order_by("name") if p.raw["spec"].get("nodeName")
    )
    node = pod.raw["spec"]["nodeName"]
    return [f"/maintenance/{m.pk}/", f"/whatif/{run.pk}/",
            f"/devices/{device.driver}/{device.pool}/{device.name}/",
            f"/pods/{pod.namespace}/{pod.name}/", f"/nodes/{node}/"]  # fmt: skip


def test_it_loads_every_main_page_without_a_policy_violation(
    mirror: MirrorHandle, operator: User, detail_pages: list[str], asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    with console_watch(page) as problems:
        log_in(page, asgi_server, operator.username, start="/")
        for path, name in [*MAIN_PAGES, *((p, p) for p in detail_pages)]:
            response = page.goto(f"{asgi_server}{path}")
            assert response is not None and response.status == 200, path
            assert "script-src 'self'" in (response.headers.get("content-security-policy") or ""), path
            page.wait_for_load_state("networkidle")
            assert violations(page) == [], name
        # The scripts ran: the devices table (Tabulator) has rows, the overview chart is drawn.
        page.goto(f"{asgi_server}/devices/")
        expect(page.locator(".tabulator-row").first).to_be_visible(timeout=10_000)
        assert violations(page) == []
        page.goto(f"{asgi_server}/")
        page.wait_for_function("document.getElementById('class-chart').width > 0")
        assert violations(page) == []
    assert problems == []


def test_the_vendored_api_docs_render_under_their_policy(
    operator: User, asgi_server: str, browser: Any
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    with console_watch(page) as problems:
        log_in(page, asgi_server, operator.username, start="/api/docs/")
        expect(page.locator(".swagger-ui .info .title")).to_contain_text("dradash", timeout=15_000)
        assert [v for v in violations(page) if "font" not in v] == []
        page.goto(f"{asgi_server}/api/redoc/")
        expect(page.locator("h1").first).to_contain_text("dradash", timeout=15_000)
    # ReDoc asks for Google fonts, which the policy (rightly) refuses: the page renders with system fonts.
    assert [p for p in problems if "fonts.googleapis.com" not in p] == []
