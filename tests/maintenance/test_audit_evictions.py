"""What an enforced NoExecute did, as the mirror saw it: each evicted pod, the PodDisruptionBudgets the
evictions broke (device-taint eviction ignores them), and the replacements and where they run."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.models import Device
from maintenance.models import AuditEntry
from maintenance.planning import DeviceRef
from maintenance.services import maintenance_apply
from tests.maintenance.support import GPU, create, preview_now

pytestmark = pytest.mark.django_db(transaction=True)  # the mirror's hook runs after its commits


def trainer_node(cluster: Any) -> tuple[str, list[str]]:
    trainers = [
        p for p in cluster.store.list("pods") if (p["metadata"].get("labels") or {}).get("app") == "trainer"
    ]
    node = trainers[0]["spec"]["nodeName"]
    return node, sorted(p["metadata"]["name"] for p in trainers if p["spec"]["nodeName"] == node)


def test_it_records_evictions_broken_budgets_and_replacements(mirrored: Any, operator: Any) -> None:
    mirrored.store.create(
        "poddisruptionbudgets",
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "trainer", "namespace": "ml"},
         "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "trainer"}}}},
    )  # fmt: skip
    mirrored.sync()
    node, evicted_trainers = trainer_node(mirrored)
    devices = [DeviceRef(d.driver, d.pool, d.name) for d in Device.objects.filter(driver=GPU, pool=node)]
    m = create(operator, devices=devices)
    run = preview_now(m, operator)
    assert [f"{b['namespace']}/{b['name']}" for b in run.result["budgets"]] == ["ml/trainer"]
    pod_nodes = {p["node"] for p in run.result["pods"] if p["evicted"]}
    # A budget breaks: the operator types the node's name (or "N pods on M nodes" when several).
    typed = (
        node if pod_nodes == {node} else f"{run.result['summary']['evicted']} pods on {len(pod_nodes)} nodes"
    )
    maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True, typed=typed)
    m.refresh_from_db()
    assert [b["name"] for b in m.budgets] == ["trainer"] and m.budgets[0]["allowed"] == 0

    assert mirrored.controllers.wait_idle(30)
    mirrored.sync()
    evicted = {e.subject for e in AuditEntry.objects.filter(maintenance=m, action="evicted")}
    assert {f"ml/{name}" for name in evicted_trainers} <= evicted
    broken = AuditEntry.objects.get(maintenance=m, action="pdb-broken")
    assert broken.subject == "ml/trainer" and "allowed 0 disruption" in broken.message
    replacements = AuditEntry.objects.filter(maintenance=m, action="replacement")
    assert replacements.exists()
    for entry in replacements:
        if entry.outcome["state"] == "running":
            assert entry.outcome["node"] and entry.outcome["node"] != node
            assert f"runs on node {entry.outcome['node']}" in entry.message
    mirrored.sync()
    assert AuditEntry.objects.filter(maintenance=m, action="pdb-broken").count() == 1  # once, not per batch
