"""Screenshots of every main page at 1440 and 390 px, light and dark, into docs/screenshots/ (the README's
gallery), on the demo topology with a maintenance draft and a what-if answer to show. Not part of the suite
(the name does not match test_*.py); scripts/screenshots runs it:

    scripts/screenshots            # or: .venv/bin/python -m pytest -q tests/e2e/shoot_pages.py

Each shot is the first screen of the page (viewport-height clip) to keep the PNGs small. A page wider than
the viewport is reported (and fails the run): the gallery is also a check.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from allocation.services import whatif_run_create
from allocation.supervisor import start_embedded_worker, stop_embedded_worker
from inventory.kube import connect
from inventory.mirror.runner import Mirror, wait_for_sync
from inventory.models import Device, KubeObject
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create
from simcluster.testing import run_simcluster
from tests.e2e.ui_pages import MAIN_PAGES

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
OUT = Path(os.environ.get("SHOTS_OUT") or Path(__file__).resolve().parents[2] / "docs" / "screenshots")
PASSWORD = "e2e-password-4"
SIZES = {1440: 900, 390: 844}
THEMES = ("light", "dark")


@pytest.fixture
def demo(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(topology="demo", kubeconfig_path=tmp_path / "kubeconfig") as c:
        assert c.controllers is not None and c.controllers.wait_idle(60)
        settings.DRADASH_KUBECONFIG = str(c.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        handle = Mirror(connect(str(c.kubeconfig_path))).start()
        assert wait_for_sync(handle, timeout=60)
        start_embedded_worker()
        yield c
        stop_embedded_worker()
        handle.stop()


@pytest.fixture
def operator(demo: Any) -> User:
    user = User.objects.create_user(username="oscar", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


@pytest.fixture
def draft(demo: Any, operator: User) -> str:
    """A maintenance draft on one node's GPUs (made before the browser: its loop owns the thread)."""
    first = Device.objects.filter(driver="gpu.example.com").order_by("node_name", "name").first()
    assert first is not None
    devices = Device.objects.filter(driver="gpu.example.com", node_name=first.node_name)
    m = maintenance_create(
        user=operator,
        draft=Draft(
            title=f"Firmware update on {first.node_name}", reason="GPU firmware 550.54 (ECC fix)",
            ticket="OPS-1234", key="example.com/maintenance", value="firmware", effect="NoExecute",
            devices=[DeviceRef(d.driver, d.pool, d.name) for d in devices],
            filters={"node": first.node_name, "driver": "gpu.example.com"},
        ),
    )  # fmt: skip
    return str(m.pk)


@pytest.fixture
def answer(demo: Any, operator: User) -> str:
    """A what-if answer, so the what-if page lists a recent run."""
    run = whatif_run_create(
        kind="headroom", input={"source": "class", "deviceClassName": "gpu.example.com"}, user=operator
    )
    return str(run.pk)


@pytest.fixture
def impact(demo: Any, operator: User) -> str:
    """A taint-impact answer (it offers "Make a maintenance draft from this")."""
    first = Device.objects.filter(driver="gpu.example.com").order_by("node_name", "name").first()
    assert first is not None
    run = whatif_run_create(
        kind="taint_impact",
        input={"selector": {"driver": "gpu.example.com", "pool": first.pool},
               "taint": {"key": "example.com/maintenance", "value": "firmware", "effect": "NoExecute"}},
        user=operator,
    )  # fmt: skip
    return str(run.pk)


@pytest.fixture
def subject_pages(demo: Any) -> list[tuple[str, str]]:
    """A trainer pod's page (claims, devices, taints) and its node's page (NUMA groups, partitions)."""
    pod = next(p for p in KubeObject.objects.filter(kind="pods", namespace="ml").order_by("name")
               if p.raw["spec"].get("nodeName"))  # fmt: skip
    return [(f"/pods/{pod.namespace}/{pod.name}/", "pod"), (f"/nodes/{pod.raw['spec']['nodeName']}/", "node")]


def overflow(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"))


def test_shoot(
    demo: Any,
    operator: User,
    draft: str,
    answer: str,
    impact: str,
    subject_pages: list[tuple[str, str]],
    asgi_server: str,
    browser: Any,
) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    pages = [
        *MAIN_PAGES,
        (f"/maintenance/{draft}/", "maintenance-detail"),
        (f"/whatif/{answer}/", "whatif-run"),
        (f"/whatif/{impact}/", "whatif-taint"),
        *subject_pages,
        # what a mistyped or hostile address looks like: the page with its errors, and the error page
        ("/devices/?nodee=node-1&taint=sometimes", "devices-refused-query"),
        ("/search/?q=gpu%00", "error-400"),
    ]
    too_wide: list[str] = []
    for theme in THEMES:
        context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=theme)
        page = context.new_page()
        page.goto(f"{asgi_server}/whatif/")
        page.fill("#id_username", operator.username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url("**/whatif/")
        for path, name in pages:
            for width, height in SIZES.items():
                page.set_viewport_size({"width": width, "height": height})
                page.goto(f"{asgi_server}{path}")
                page.wait_for_load_state("networkidle")
                if name.startswith("whatif-"):  # the worker answers; the page reloads when it has
                    page.wait_for_selector("#run-status[data-state=succeeded]", timeout=60_000)
                    page.wait_for_load_state("networkidle")
                page.wait_for_timeout(250)
                if overflow(page) > 0:
                    too_wide.append(f"{name} at {width} px ({theme}): {overflow(page)} px too wide")
                page.screenshot(path=str(OUT / f"{name}-{width}-{theme}.png"))
        context.close()
    assert too_wide == []
