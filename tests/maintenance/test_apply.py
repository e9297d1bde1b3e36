"""Enforcing a maintenance: dry run first, write all rules or none, keep the draft on failure, undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inventory.models import Device
from maintenance import cluster as cluster_access
from maintenance.models import AuditEntry, Maintenance
from maintenance.services import MaintenanceError, maintenance_apply, maintenance_undo
from tests.maintenance.support import GPU, create, preview_now, rules_in

pytestmark = pytest.mark.django_db


def test_it_writes_labelled_rules_and_audits_them(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=False)

    stored = rules_in(mirrored)
    assert sorted(stored) == sorted(r["name"] for r in m.rules)
    rule = stored[m.rules[0]["name"]]
    assert rule["metadata"]["labels"]["dradash.io/maintenance"] == m.id
    assert rule["spec"]["taint"]["effect"] == "None"
    assert rule["spec"]["deviceSelector"] == {"driver": GPU, "pool": "node-0", "device": "gpu-0"}
    m.refresh_from_db()
    assert (m.state, m.applied_effect) == (Maintenance.APPLIED, "None")
    writes = AuditEntry.objects.filter(maintenance=m, action__in=("create", "update"))
    assert sorted(writes.values_list("rule_name", flat=True)) == sorted(stored)
    assert all(e.rule_uid and e.rule_generation for e in writes)


def test_it_switches_the_effect_in_place(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=False)
    run = preview_now(m, operator)
    maintenance_apply(
        maintenance=m, user=operator, effect="NoSchedule", confirmed=True, preview_id=str(run.pk)
    )
    effects = {r["spec"]["taint"]["effect"] for r in rules_in(mirrored).values()}
    assert effects == {"NoSchedule"}
    assert AuditEntry.objects.filter(maintenance=m, action="update").count() == 2


def test_it_refuses_to_enforce_without_confirmation(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    preview_now(m, operator)
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=False)
    assert error.value.errors[0].field == "confirm"
    assert rules_in(mirrored) == {}
    assert AuditEntry.objects.filter(maintenance=m, action="refused").exists()


def test_it_keeps_the_draft_and_writes_nothing_when_the_api_is_down(
    mirrored: Any, operator: Any, settings: Any, tmp_path: Path
) -> None:
    m = create(operator)
    preview_now(m, operator)
    dead = tmp_path / "dead-kubeconfig"
    dead.write_text(Path(mirrored.kubeconfig_path).read_text().replace(f":{mirrored.port}", ":9"))
    settings.DRADASH_KUBECONFIG = str(dead)
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True)
    assert error.value.status >= 500
    assert "nothing was applied" in error.value.headline
    m.refresh_from_db()
    assert m.state == Maintenance.DRAFT and m.last_error and m.write_intent == {}
    assert AuditEntry.objects.filter(maintenance=m, action="failed").exists()
    assert rules_in(mirrored) == {}


def test_it_rolls_back_when_a_write_fails_midway(mirrored: Any, operator: Any, monkeypatch: Any) -> None:
    m = create(operator)
    preview_now(m, operator)
    second = m.rules[1]["name"]
    real_create = cluster_access.create_rule

    def create_then_collide(obj: dict[str, Any], *, dry_run: bool, **kwargs: Any) -> dict[str, Any]:
        # Someone else creates the second rule between our dry run and our write: the real server answers 409.
        if not dry_run and obj["metadata"]["name"] == second:
            mirrored.store.create(
                "devicetaintrules",
                {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": second},
                 "spec": {"deviceSelector": {"driver": GPU, "pool": "node-9"}, "taint": {"key": "x", "effect": "None"}}},
            )  # fmt: skip
        return real_create(obj, dry_run=dry_run, **kwargs)

    monkeypatch.setattr(cluster_access, "create_rule", create_then_collide)
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True)
    assert error.value.status == 409
    assert list(rules_in(mirrored)) == [second]  # ours rolled back; the other one untouched
    m.refresh_from_db()
    assert m.state == Maintenance.DRAFT and "rolled back" in m.last_error["message"]


def test_it_refuses_to_overwrite_a_rule_it_does_not_own(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    name = m.rules[0]["name"]
    mirrored.store.create(
        "devicetaintrules",
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name},
         "spec": {"deviceSelector": {"driver": GPU}, "taint": {"key": "theirs", "effect": "None"}}},
    )  # fmt: skip
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=True)
    assert error.value.status == 409
    assert rules_in(mirrored)[name]["spec"]["taint"]["key"] == "theirs"


def test_it_undoes_the_whole_maintenance(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    preview_now(m, operator)
    maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True)
    maintenance_undo(maintenance=m, user=operator, mode="none")
    assert {r["spec"]["taint"]["effect"] for r in rules_in(mirrored).values()} == {"None"}
    consequences = maintenance_undo(maintenance=m, user=operator, mode="delete")
    assert rules_in(mirrored) == {}
    m.refresh_from_db()
    assert m.state == Maintenance.UNDONE
    assert consequences["text"] == "No pod was evicted by this maintenance."
    deletes = AuditEntry.objects.filter(maintenance=m, action="delete")
    assert deletes.count() == len(m.rules)
    assert AuditEntry.objects.filter(maintenance=m, action="undo").count() == 2


def test_it_refuses_an_empty_selection_and_needs_explicit_consent_for_every_device(
    mirrored: Any, operator: Any
) -> None:
    with pytest.raises(MaintenanceError) as error:
        create(operator, devices=[])
    assert error.value.errors[0].field == "devices"
    m = create(operator, devices=[], every_device=True)
    assert m.rules == [{"name": f"dradash-{m.id}-every-device", "selector": {}}]
    assert m.device_count == Device.objects.count() > 0
    assert m.scope["node_count"] == 3 and m.scope["drivers"] == [GPU, "nic.example.com"]


def test_it_names_every_bad_field(mirrored: Any, operator: Any) -> None:
    with pytest.raises(MaintenanceError) as error:
        create(operator, title="", key="not a key", effect="PreferNoSchedule")
    assert {e.field for e in error.value.errors} == {"title", "taint.key", "taint.effect"}
