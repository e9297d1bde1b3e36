"""Rules changed outside dradash enter the audit log as the mirror sees them, attributed to the field
manager the API server recorded in managedFields — and dradash's own writes are not reported twice."""

from __future__ import annotations

from typing import Any

import pytest

from maintenance.audit import spec_manager
from maintenance.models import AuditEntry
from maintenance.services import maintenance_apply, maintenance_undo
from tests.kubectl import run_kubectl
from tests.maintenance.support import create

pytestmark = pytest.mark.django_db(transaction=True)  # the mirror's hook runs after its commits

RULE = """apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: by-hand
spec:
  deviceSelector: {{driver: gpu.example.com, pool: node-0}}
  taint: {{key: example.com/manual, effect: {effect}}}
"""


def kubectl(cluster: Any, *args: str, text: str | None = None) -> None:
    done = run_kubectl(cluster.kubeconfig_path, *args, input_text=text)
    assert done.returncode == 0, done.stderr


def test_it_names_the_kubectl_field_manager_of_outside_changes(mirrored: Any) -> None:
    kubectl(mirrored, "create", "-f", "-", text=RULE.format(effect="None"))
    mirrored.sync()
    kubectl(mirrored, "apply", "-f", "-", text=RULE.format(effect="NoSchedule"))
    mirrored.sync()
    kubectl(mirrored, "delete", "devicetaintrule", "by-hand")
    mirrored.sync()
    entries = list(
        AuditEntry.objects.filter(rule_name="by-hand")
        .order_by("id")
        .values_list("action", "actor", "effect", "source")
    )
    assert entries == [
        ("seen-create", "kubectl-create", "None", "cluster"),
        ("seen-update", "kubectl-client-side-apply", "NoSchedule", "cluster"),
        ("seen-delete", "unknown", "", "cluster"),
    ]
    assert (
        "outside dradash by kubectl-client-side-apply" in AuditEntry.objects.get(action="seen-update").message
    )
    mirrored.sync()  # a repeated look at the same objects adds nothing
    assert AuditEntry.objects.filter(rule_name="by-hand").count() == 3


def test_it_reports_a_kubectl_edit_of_a_dradash_rule_against_its_maintenance(
    mirrored: Any, operator: Any
) -> None:
    m = create(operator)
    maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=False)
    mirrored.sync()
    assert not AuditEntry.objects.filter(source="cluster").exists(), (
        "dradash's own write is not an outside change"
    )
    name = m.rules[0]["name"]
    kubectl(
        mirrored,
        "patch",
        "devicetaintrule",
        name,
        "--type=merge",
        "-p",
        '{"spec":{"taint":{"effect":"NoExecute"}}}',
    )
    mirrored.sync()
    seen = AuditEntry.objects.get(source="cluster", rule_name=name)
    assert (seen.action, seen.actor, seen.effect, seen.maintenance_id) == (
        "seen-update",
        "kubectl-patch",
        "NoExecute",
        m.id,
    )
    maintenance_undo(maintenance=m, user=operator, mode="delete")
    mirrored.sync()
    assert not AuditEntry.objects.filter(action="seen-delete").exists(), (
        "dradash's own deletes are not reported again"
    )


def test_rules_there_before_the_first_list_are_no_change_but_their_later_changes_are(
    cluster_settings: Any,
) -> None:
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror

    for name in ("before-a", "before-b"):
        kubectl(
            cluster_settings, "create", "-f", "-", text=RULE.format(effect="None").replace("by-hand", name)
        )
    mirror = Mirror(connect(str(cluster_settings.kubeconfig_path)))
    mirror.sync_once()
    assert not AuditEntry.objects.filter(source="cluster").exists(), (
        "rules the cluster had before dradash first looked were not created then"
    )

    kubectl(
        cluster_settings,
        "apply",
        "-f",
        "-",
        text=RULE.format(effect="NoSchedule").replace("by-hand", "before-a"),
    )
    kubectl(cluster_settings, "delete", "devicetaintrule", "before-b")
    mirror.sync_once()  # a re-list: what differs from the rows held
    kubectl(cluster_settings, "create", "-f", "-", text=RULE.format(effect="None"))
    mirror.sync_once()

    entries = list(
        AuditEntry.objects.filter(source="cluster")
        .order_by("id")
        .values_list("action", "rule_name", "effect")
    )
    assert entries == [
        ("seen-update", "before-a", "NoSchedule"),
        ("seen-delete", "before-b", ""),
        ("seen-create", "by-hand", "None"),
    ]
    assert (
        "effect: NoSchedule" in AuditEntry.objects.get(rule_name="before-a").yaml
    )  # a real change: its YAML


def test_a_rule_deleted_and_created_again_unseen_is_told_apart_from_its_successor(
    cluster_settings: Any,
) -> None:
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror

    mirror = Mirror(connect(str(cluster_settings.kubeconfig_path)))
    mirror.sync_once()
    kubectl(cluster_settings, "create", "-f", "-", text=RULE.format(effect="None"))
    mirror.sync_once()
    # deleted and created again between two looks: the re-list sees a new object under the old name
    kubectl(cluster_settings, "delete", "devicetaintrule", "by-hand")
    kubectl(cluster_settings, "create", "-f", "-", text=RULE.format(effect="NoSchedule"))
    mirror.sync_once()

    seen = list(
        AuditEntry.objects.filter(rule_name="by-hand").order_by("id").values_list("action", "rule_uid")
    )
    (first_uid,) = {uid for action, uid in seen if action == "seen-delete"}
    (now_uid,) = {uid for action, uid in seen if action == "seen-create"} - {first_uid}
    message = AuditEntry.objects.get(action="seen-delete").message
    assert message.startswith(f"deleted outside dradash (uid {first_uid[:8]};")
    assert message.endswith(f"the rule named so now is another object, created anew (uid {now_uid[:8]})")


def test_it_reads_the_newest_spec_manager_from_managed_fields() -> None:
    raw = {"metadata": {"managedFields": [
        {"manager": "helm", "operation": "Apply", "time": "2026-11-29T10:00:00Z", "fieldsV1": {"f:spec": {}}},
        {"manager": "rule-status", "operation": "Update", "subresource": "status", "time": "2026-11-29T12:00:00Z",
         "fieldsV1": {"f:status": {}}},
        {"manager": "kubectl-edit", "operation": "Update", "time": "2026-11-29T11:00:00Z", "fieldsV1": {"f:spec": {}}},
        {"manager": "labeller", "operation": "Update", "time": "2026-11-29T11:30:00Z", "fieldsV1": {"f:metadata": {}}},
    ]}}  # fmt: skip
    assert spec_manager(raw) == "kubectl-edit"
    assert spec_manager({"metadata": {}}) == ""
