"""The audit log tells the story: dradash's own writes, and rules others created, changed or deleted."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from inventory.models import KubeObject
from maintenance.models import AuditEntry
from maintenance.selectors import audit_observe_cluster

pytestmark = pytest.mark.django_db


def mirrored_rule(name: str, uid: str, generation: int, effect: str = "NoSchedule") -> None:
    raw = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
           "metadata": {"name": name, "uid": uid, "generation": generation},
           "spec": {"deviceSelector": {"driver": "gpu.example.com"}, "taint": {"key": "k", "effect": effect}}}  # fmt: skip
    KubeObject.objects.update_or_create(
        kind="devicetaintrules", uid=uid, defaults={"name": name, "generation": generation, "raw": raw}
    )


def test_it_records_rules_created_changed_and_deleted_outside_dradash() -> None:
    mirrored_rule("kubectl-made", "u1", 1)
    assert audit_observe_cluster() == 1
    assert audit_observe_cluster() == 0  # idempotent
    mirrored_rule("kubectl-made", "u1", 2, effect="NoExecute")
    assert audit_observe_cluster() == 1
    KubeObject.objects.filter(uid="u1").delete()
    assert audit_observe_cluster() == 1
    actions = list(AuditEntry.objects.order_by("id").values_list("action", "source", "effect"))
    assert actions == [
        ("seen-create", "cluster", "NoSchedule"),
        ("seen-update", "cluster", "NoExecute"),
        ("seen-delete", "cluster", ""),
    ]


def test_it_filters_and_exports_the_audit_log(operator: Any) -> None:
    mirrored_rule("one", "u1", 1)
    mirrored_rule("two", "u2", 1)
    audit_observe_cluster()  # what the mirror's batch hook does when it commits these rules
    client = Client()
    client.force_login(operator)
    page = client.get("/maintenance/audit/?rule=two").content.decode()
    assert ">two<" in page and ">one<" not in page
    csv_text = client.get("/maintenance/audit/?format=csv").content.decode()
    assert csv_text.splitlines()[0].startswith("at,actor,source,action,rule")
    assert len(csv_text.strip().splitlines()) == 3
    api = client.get("/api/maintenance/audit/?source=cluster").json()
    assert {e["rule_name"] for e in api} == {"one", "two"}


@pytest.mark.django_db(transaction=True)
def test_it_records_a_kubectl_rule_when_the_mirror_sees_it(simcluster: Any) -> None:
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror

    mirror = Mirror(connect(str(simcluster.kubeconfig_path)))
    mirror.sync_once()
    simcluster.store.create(
        "devicetaintrules",
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "by-kubectl"},
         "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "node-0"},
                  "taint": {"key": "example.com/manual", "effect": "NoSchedule"}}},
    )  # fmt: skip
    mirror.sync_once()
    entry = AuditEntry.objects.get(rule_name="by-kubectl")
    assert (entry.action, entry.source, entry.effect) == ("seen-create", "cluster", "NoSchedule")
