"""Enforcing a maintenance: dry run first, write all rules or none, keep the draft on failure, undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from maintenance import cluster as cluster_access
from maintenance.models import AuditEntry, Maintenance
from maintenance.planning import DeviceRef
from maintenance.services import (
    Draft,
    MaintenanceError,
    maintenance_apply,
    maintenance_create,
    maintenance_undo,
)

pytestmark = pytest.mark.django_db

GPU = "gpu.example.com"


def draft(**overrides: Any) -> Draft:
    values: dict[str, Any] = {
        "title": "Firmware update",
        "reason": "new firmware for node-0",
        "ticket": "OPS-7",
        "key": "example.com/maintenance",
        "value": "firmware",
        "effect": "NoExecute",
        "devices": [DeviceRef(GPU, "node-0", "gpu-0"), DeviceRef(GPU, "node-0", "gpu-1")],
        "filters": {"node": "node-0"},
    }
    values.update(overrides)
    return Draft(**values)


def rules_in(cluster: Any) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in cluster.store.list("devicetaintrules")}


def test_it_writes_labelled_rules_and_audits_them(cluster_settings: Any, operator: Any) -> None:
    m = maintenance_create(user=operator, draft=draft())
    maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=False)

    stored = rules_in(cluster_settings)
    assert sorted(stored) == sorted(r["name"] for r in m.rules)
    rule = stored[m.rules[0]["name"]]
    assert rule["metadata"]["labels"]["dradash.io/maintenance"] == m.id
    assert rule["spec"]["taint"]["effect"] == "None"
    assert rule["spec"]["deviceSelector"] == {"driver": GPU, "pool": "node-0", "device": "gpu-0"}
    m.refresh_from_db()
    assert (m.state, m.applied_effect) == (Maintenance.APPLIED, "None")
    assert list(AuditEntry.objects.filter(maintenance=m).values_list("action", flat=True)) == [
        "create",
        "create",
    ]


def test_it_switches_the_effect_in_place(cluster_settings: Any, operator: Any) -> None:
    m = maintenance_create(user=operator, draft=draft())
    maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=False)
    maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True)
    effects = {r["spec"]["taint"]["effect"] for r in rules_in(cluster_settings).values()}
    assert effects == {"NoSchedule"}
    assert AuditEntry.objects.filter(maintenance=m, action="update").count() == 2


def test_it_refuses_to_enforce_without_confirmation(cluster_settings: Any, operator: Any) -> None:
    m = maintenance_create(user=operator, draft=draft())
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=False)
    assert error.value.errors[0].field == "confirm"
    assert rules_in(cluster_settings) == {}


def test_it_keeps_the_draft_and_writes_nothing_when_the_api_is_down(
    cluster_settings: Any, operator: Any, settings: Any, tmp_path: Path
) -> None:
    dead = tmp_path / "dead-kubeconfig"
    dead.write_text(
        Path(cluster_settings.kubeconfig_path).read_text().replace(f":{cluster_settings.port}", ":9")
    )
    settings.DRADASH_KUBECONFIG = str(dead)
    m = maintenance_create(user=operator, draft=draft())
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True)
    assert error.value.status >= 500
    m.refresh_from_db()
    assert m.state == Maintenance.DRAFT and m.last_error
    assert AuditEntry.objects.filter(maintenance=m, action="failed").exists()
    assert rules_in(cluster_settings) == {}


def test_it_rolls_back_when_a_write_fails_midway(
    cluster_settings: Any, operator: Any, monkeypatch: Any
) -> None:
    m = maintenance_create(user=operator, draft=draft())
    second = m.rules[1]["name"]
    real_create = cluster_access.create_rule

    def create_then_collide(obj: dict[str, Any], *, dry_run: bool) -> dict[str, Any]:
        # Someone else creates the second rule between our dry run and our write: the real server answers 409.
        if not dry_run and obj["metadata"]["name"] == second:
            cluster_settings.store.create(
                "devicetaintrules",
                {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": second},
                 "spec": {"deviceSelector": {"driver": GPU, "pool": "node-9"}, "taint": {"key": "x", "effect": "None"}}},
            )  # fmt: skip
        return real_create(obj, dry_run=dry_run)

    monkeypatch.setattr(cluster_access, "create_rule", create_then_collide)
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True)
    assert error.value.status == 409
    assert list(rules_in(cluster_settings)) == [second]  # ours rolled back; the other one untouched
    m.refresh_from_db()
    assert m.state == Maintenance.DRAFT and "rolled back" in m.last_error["message"]


def test_it_refuses_to_overwrite_a_rule_it_does_not_own(cluster_settings: Any, operator: Any) -> None:
    m = maintenance_create(user=operator, draft=draft())
    name = m.rules[0]["name"]
    cluster_settings.store.create(
        "devicetaintrules",
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name},
         "spec": {"deviceSelector": {"driver": GPU}, "taint": {"key": "theirs", "effect": "None"}}},
    )  # fmt: skip
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="None", confirmed=True)
    assert error.value.status == 409
    assert rules_in(cluster_settings)[name]["spec"]["taint"]["key"] == "theirs"


def test_it_undoes_the_whole_maintenance(cluster_settings: Any, operator: Any) -> None:
    m = maintenance_create(user=operator, draft=draft())
    maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True)
    maintenance_undo(maintenance=m, user=operator, mode="none")
    assert {r["spec"]["taint"]["effect"] for r in rules_in(cluster_settings).values()} == {"None"}
    maintenance_undo(maintenance=m, user=operator, mode="delete")
    assert rules_in(cluster_settings) == {}
    m.refresh_from_db()
    assert m.state == Maintenance.UNDONE


def test_it_refuses_an_empty_selection_and_needs_explicit_consent_for_every_device(operator: Any) -> None:
    with pytest.raises(MaintenanceError) as error:
        maintenance_create(user=operator, draft=draft(devices=[]))
    assert error.value.errors[0].field == "devices"
    m = maintenance_create(user=operator, draft=draft(devices=[], every_device=True))
    assert m.rules == [{"name": f"dradash-{m.id}-every-device", "selector": {}}]


def test_it_names_every_bad_field(operator: Any) -> None:
    with pytest.raises(MaintenanceError) as error:
        maintenance_create(user=operator, draft=draft(title="", key="not a key", effect="PreferNoSchedule"))
    assert {e.field for e in error.value.errors} == {"title", "taint.key", "taint.effect"}
