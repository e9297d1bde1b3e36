"""A real browser against a real ASGI server (uvicorn in a thread) with the mirror following simcluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]


@pytest.fixture
def viewer(transactional_db: None) -> Any:
    """A user in the viewer role (password: browser_helpers.PASSWORD)."""
    from django.contrib.auth.models import Group, User

    from tests.e2e.browser_helpers import PASSWORD

    user = User.objects.create_user(username="vera", password=PASSWORD)
    user.groups.add(Group.objects.get(name="viewer"))
    return user


@pytest.fixture
def operator(transactional_db: None) -> Any:
    """A user in the operator role (password: browser_helpers.PASSWORD)."""
    from django.contrib.auth.models import Group, User

    from tests.e2e.browser_helpers import PASSWORD

    user = User.objects.create_user(username="otto", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="operator")[0])
    return user


@pytest.fixture
def demo_mirrored(transactional_db: None) -> None:
    """The demo topology's objects written into the mirror's tables (no mirror running)."""
    from inventory.kube import MIRRORED_KINDS
    from tests.inventory.factories import write
    from tests.simcluster.sim_helpers import running

    with running("demo") as (cluster, _, _):
        objects = [(kind, obj) for kind in MIRRORED_KINDS for obj in cluster.store.list(kind)]
    write(*objects)


@pytest.fixture
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("e2e needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, chromium_sandbox=False, args=LAUNCH_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def mirror(simcluster: Any) -> Iterator[Any]:
    """The mirror following the `simcluster` fixture's cluster, synced before the test starts."""
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror, wait_for_sync

    handle = Mirror(connect(str(simcluster.kubeconfig_path))).start()
    assert wait_for_sync(handle, timeout=30), "the mirror did not sync with simcluster"
    yield handle
    handle.stop()
