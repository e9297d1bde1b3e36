"""After NoExecute is enforced, its own evictions change the cluster the preview saw: the page says so
plainly instead of warning that "the cluster changed, so enforcing is blocked" about a maintenance that
has just been enforced as asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from inventory.models import Device
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_apply, maintenance_create
from simcluster.testing import run_simcluster
from tests.maintenance.support import GPU, gpu_pods_on, preview_now


@pytest.fixture
def live_cluster(tmp_path: Path, settings: Any) -> Iterator[Any]:
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as cluster:
        assert cluster.controllers is not None and cluster.controllers.wait_idle(20)
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        yield cluster


@pytest.mark.django_db(transaction=True)
def test_it_does_not_call_the_preview_stale_because_of_its_own_evictions(
    live_cluster: Any, operator: Any
) -> None:
    mirror = Mirror(connect(str(live_cluster.kubeconfig_path)))
    mirror.sync_once()
    node = max(("node-0", "node-1", "node-2"), key=lambda n: len(gpu_pods_on(live_cluster, n)))
    victims = gpu_pods_on(live_cluster, node)
    assert victims
    devices = [DeviceRef(d.driver, d.pool, d.name) for d in Device.objects.filter(driver=GPU, pool=node)]
    m = maintenance_create(
        user=operator,
        draft=Draft(title=f"drain {node}", reason="PSU swap", ticket="", key="example.com/maintenance",
                    value="psu", effect="NoExecute", devices=devices, filters={"node": node}),
    )  # fmt: skip
    preview_now(m, operator)
    maintenance_apply(
        maintenance=m, user=operator, effect="NoExecute", confirmed=True, typed=str(len(victims))
    )
    assert live_cluster.controllers.wait_idle(30)
    mirror.sync_once()

    client = Client()
    client.force_login(operator)
    html = client.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="preview-stale" data-before-enforcement="true"' in html
    assert "This preview predates enforcing NoExecute" in html
    assert "evicted pods release the devices they held" in html
    assert "so enforcing is blocked" not in html
    assert "were released since" in html  # what changed is still listed
