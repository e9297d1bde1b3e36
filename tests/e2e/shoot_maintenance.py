"""Screenshots of the maintenance pages (docs/screenshots/), on the demo topology. Not part of the
suite (the name does not match test_*.py); run it on purpose:

    .venv/bin/python -m pytest -q tests/e2e/shoot_maintenance.py
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from allocation.supervisor import start_embedded_worker, stop_embedded_worker
from inventory.kube import connect
from inventory.mirror.runner import Mirror, wait_for_sync
from simcluster.testing import run_simcluster

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
PASSWORD = "e2e-password-3"
WIDTHS = (1440, 390)
INSPECT = Path(os.environ["SHOTS_INSPECT"]) if os.environ.get("SHOTS_INSPECT") else None


@pytest.fixture
def demo(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(
        topology="demo", kubeconfig_path=tmp_path / "kubeconfig", rule_status_period=0.5
    ) as c:
        assert c.controllers is not None and c.controllers.wait_idle(60)
        settings.DRADASH_KUBECONFIG = str(c.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        handle = Mirror(connect(str(c.kubeconfig_path))).start()
        assert wait_for_sync(handle, timeout=60)
        start_embedded_worker()
        yield c
        stop_embedded_worker()
        handle.stop()


def shoot(page: Any, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(300)
        wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *'))
                .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
                .filter((el) => !el.closest('.table-wrap') || el.classList.contains('table-wrap'))
                .slice(0, 8).map((el) => el.tagName + '#' + el.id + '.' + el.className + ' ' +
                                  Math.round(el.getBoundingClientRect().right))"""
        )
        if wide:
            print(f"OVERFLOW {name} {width}: {wide}")
        page.screenshot(path=str(OUT / f"maintenance-{name}-{width}.png"), full_page=True)
        if INSPECT:  # element shots a reviewer can look at closely (not committed)
            INSPECT.mkdir(exist_ok=True)
            for selector in ("#m-live", "#progress-panel", "#rules-panel", "#devices-panel", "#audit-live",
                             "#selection-panel", "#taint-panel"):  # fmt: skip
                if page.locator(selector).count():
                    page.locator(selector).scroll_into_view_if_needed()
                    page.evaluate(f"document.querySelector('{selector}').scrollIntoView()")
                    page.screenshot(path=str(INSPECT / f"{name}-{width}-{selector[1:]}.png"))


@pytest.fixture
def operator(transactional_db: None) -> User:
    user = User.objects.create_user(username="oscar", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


def test_shoot(demo: Any, operator: User, asgi_server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900}, color_scheme="light")
    page.goto(f"{asgi_server}/maintenance/new/")
    page.fill("#id_username", "oscar")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/maintenance/new/")
    shoot(page, "new")

    node = demo.store.list("pods", namespace="ml")[0]["spec"]["nodeName"]
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{asgi_server}/maintenance/new/?node={node}&driver=gpu.example.com")
    page.check("#select-all")
    page.fill("input[name=title]", f"Firmware update on {node}")
    page.fill("input[name=reason]", "GPU firmware 550.54 (ECC fix)")
    page.fill("input[name=ticket]", "OPS-1234")
    page.fill("input[name=value]", "firmware")
    page.click("#create-draft")
    page.wait_for_url("**/maintenance/m*/")
    page.click("#run-preview")
    expect(page.locator("#blast-radius")).to_be_visible(timeout=60_000)
    form = page.locator("#enforce-NoExecute-form")
    form.locator("input.enforce-confirm").check()
    shoot(page, "detail")

    phrase = form.get_attribute("data-phrase") or ""
    if phrase:
        form.locator("input.enforce-typed").fill(phrase)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.click("#enforce-NoExecute")
    page.wait_for_url("**/maintenance/m*/")
    expect(page.locator("#progress-counts")).to_have_attribute("data-complete", "true", timeout=60_000)
    page.wait_for_timeout(2000)
    shoot(page, "detail-applied")

    page.goto(f"{asgi_server}/maintenance/audit/")
    shoot(page, "audit")
