"""The whole maintenance against a running simcluster, without a browser: drain the GPUs of a node
with NoExecute, watch the pods go and their replacements land elsewhere, then undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from inventory.models import Device
from maintenance.models import Maintenance
from maintenance.planning import DeviceRef
from maintenance.progress import maintenance_progress
from maintenance.services import Draft, maintenance_apply, maintenance_create, maintenance_undo
from simcluster.testing import run_simcluster

GPU = "gpu.example.com"


@pytest.fixture
def live_cluster(tmp_path: Path, settings: Any) -> Any:
    with run_simcluster(
        topology="tiny", kubeconfig_path=tmp_path / "kubeconfig", rule_status_period=0.2
    ) as cluster:
        assert cluster.controllers is not None and cluster.controllers.wait_idle(20)
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        yield cluster


def running_gpu_pods(cluster: Any, node: str) -> set[str]:
    claims = [
        c for c in cluster.store.list("resourceclaims")
        if any(r["pool"] == node and r["driver"] == GPU
               for r in c.get("status", {}).get("allocation", {}).get("devices", {}).get("results", []))
    ]  # fmt: skip
    return {r["uid"] for c in claims for r in c["status"].get("reservedFor", [])}


@pytest.mark.django_db(transaction=True)
def test_it_drains_a_node_and_reports_replacements(live_cluster: Any, operator: Any) -> None:
    mirror = Mirror(connect(str(live_cluster.kubeconfig_path)))
    mirror.sync_once()
    busy_node = max(("node-0", "node-1", "node-2"), key=lambda n: len(running_gpu_pods(live_cluster, n)))
    victims = running_gpu_pods(live_cluster, busy_node)
    assert victims, "the tiny topology runs GPU workloads"
    devices = [DeviceRef(d.driver, d.pool, d.name) for d in Device.objects.filter(driver=GPU, pool=busy_node)]

    m = maintenance_create(
        user=operator,
        draft=Draft(title=f"drain {busy_node}", reason="PSU swap", ticket="", key="example.com/maintenance",
                    value="psu", effect="NoExecute", devices=devices, filters={"node": busy_node}),
    )  # fmt: skip
    assert len(m.rules) == 1 and m.rules[0]["selector"] == {"driver": GPU, "pool": busy_node}

    maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True)
    m.refresh_from_db()
    assert {p["uid"] for p in m.affected} == victims

    assert live_cluster.controllers.wait_idle(30)
    remaining = {p["metadata"]["uid"] for p in live_cluster.store.list("pods")}
    assert not (victims & remaining), "every pod on the drained GPUs was evicted"
    mirror.sync_once()
    progress = maintenance_progress(maintenance=m, now=timezone.now())
    assert progress["complete"] and progress["counts"]["gone"] == len(victims)
    replaced = [p["replacement"] for p in progress["pods"] if p["replacement"]]
    assert replaced and all(r["node"] != busy_node for r in replaced if r["state"] == "running")
    rule_conditions = progress["rules"][0]["conditions"]
    assert any(c["type"] == "EvictionInProgress" for c in rule_conditions)

    maintenance_undo(maintenance=m, user=operator, mode="delete")
    assert live_cluster.store.list("devicetaintrules") == []
    assert Maintenance.objects.get(pk=m.pk).state == Maintenance.UNDONE
