"""The whole maintenance against a running simcluster, without a browser: drain the GPUs of a node
with NoExecute, watch the pods go and their replacements land elsewhere, then undo — and the audit
log tells that whole story."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from inventory.models import Device
from maintenance.models import AuditEntry, Maintenance
from maintenance.planning import DeviceRef
from maintenance.progress import maintenance_progress
from maintenance.services import (
    Draft,
    MaintenanceError,
    maintenance_apply,
    maintenance_create,
    maintenance_undo,
)
from simcluster.testing import run_simcluster
from tests.maintenance.support import GPU, gpu_pods_on, preview_now


@pytest.fixture
def live_cluster(tmp_path: Path, settings: Any) -> Any:
    with run_simcluster(
        topology="tiny", kubeconfig_path=tmp_path / "kubeconfig", rule_status_period=0.2
    ) as cluster:
        assert cluster.controllers is not None and cluster.controllers.wait_idle(20)
        settings.DRADASH_KUBECONFIG = str(cluster.kubeconfig_path)
        settings.DRADASH_KUBE_CONTEXT = ""
        yield cluster


@pytest.mark.django_db(transaction=True)
def test_it_drains_a_node_and_reports_replacements(live_cluster: Any, operator: Any) -> None:
    mirror = Mirror(connect(str(live_cluster.kubeconfig_path)))
    mirror.sync_once()
    busy_node = max(("node-0", "node-1", "node-2"), key=lambda n: len(gpu_pods_on(live_cluster, n)))
    victims = gpu_pods_on(live_cluster, busy_node)
    assert victims, "the tiny topology runs GPU workloads"
    devices = [DeviceRef(d.driver, d.pool, d.name) for d in Device.objects.filter(driver=GPU, pool=busy_node)]

    m = maintenance_create(
        user=operator,
        draft=Draft(title=f"drain {busy_node}", reason="PSU swap", ticket="", key="example.com/maintenance",
                    value="psu", effect="NoExecute", devices=devices, filters={"node": busy_node}),
    )  # fmt: skip
    assert len(m.rules) == 1 and m.rules[0]["selector"] == {"driver": GPU, "pool": busy_node}
    run = preview_now(m, operator)
    assert run.result["summary"]["evicted"] == len(victims)

    with pytest.raises(MaintenanceError) as wrong:
        maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True, typed="yes")
    assert (
        wrong.value.errors[0].field == "typed" and f'type "{len(victims)}"' in wrong.value.errors[0].message
    )
    assert live_cluster.store.list("devicetaintrules") == []

    maintenance_apply(
        maintenance=m, user=operator, effect="NoExecute", confirmed=True, typed=str(len(victims))
    )
    m.refresh_from_db()
    assert {p["uid"] for p in m.affected} == set(victims)

    assert live_cluster.controllers.wait_idle(30)
    remaining = {p["metadata"]["uid"] for p in live_cluster.store.list("pods")}
    assert not (set(victims) & remaining), "every pod on the drained GPUs was evicted"
    mirror.sync_once()
    progress = maintenance_progress(maintenance=m, now=timezone.now())
    assert progress["complete"] and progress["counts"]["evicted"] == len(victims)
    assert progress["bar"] == {"done": len(victims), "of": len(victims), "percent": 100.0,
                               "label": f"{len(victims)} of {len(victims)} evicted"}  # fmt: skip
    replaced = [p["replacement"] for p in progress["pods"] if p["replacement"]]
    assert replaced and all(r["node"] != busy_node for r in replaced if r["state"] == "running")
    rule_conditions = progress["rules"][0]["conditions"]
    assert any(c["type"] == "EvictionInProgress" for c in rule_conditions)

    # The mirror's hook wrote the evictions and the replacements (with where they run) into the log.
    evicted = AuditEntry.objects.filter(maintenance=m, action="evicted")
    assert set(evicted.values_list("object_uid", flat=True)) == set(victims)
    running = {r["name"]: r["node"] for r in replaced if r["state"] == "running"}
    logged = {
        e.subject.split("/")[1]: e.outcome["node"]
        for e in AuditEntry.objects.filter(maintenance=m, action="replacement")
    }
    assert running and all(logged.get(name) == node for name, node in running.items())
    confirm = AuditEntry.objects.get(maintenance=m, action="confirm")
    assert confirm.outcome["typed"] == str(len(victims)) and confirm.outcome["blast"]["pods"] == len(victims)
    assert confirm.actor == operator.username

    consequences = maintenance_undo(maintenance=m, user=operator, mode="delete")
    assert f"{len(victims)} pod" in consequences["text"] and "stay evicted" in consequences["text"]
    assert {r["name"] for r in consequences["replacements"]} >= set(running)
    assert live_cluster.store.list("devicetaintrules") == []
    assert Maintenance.objects.get(pk=m.pk).state == Maintenance.UNDONE
    mirror.sync_once()
    # dradash's own writes are not reported again as outside changes when the mirror sees them.
    assert not AuditEntry.objects.filter(maintenance=m, source="cluster", action__startswith="seen-").exists()
    story = list(AuditEntry.objects.filter(maintenance=m).order_by("id").values_list("action", flat=True))
    for step in (
        "draft",
        "preview",
        "preview-result",
        "refused",
        "confirm",
        "create",
        "evicted",
        "delete",
        "undo",
    ):
        assert step in story, f"{step} missing from {story}"
    assert story.index("draft") < story.index("preview") < story.index("confirm") < story.index("create")
    assert story.index("create") < story.index("delete") < story.index("undo")
