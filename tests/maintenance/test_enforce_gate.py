"""NoSchedule and NoExecute only after a preview of this draft that still describes the cluster, and a
confirmation whose typed phrase grows with what is at stake (checked by the server)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from inventory.models import Device
from maintenance.confirmation import BlastRadius, challenge
from maintenance.models import AuditEntry
from maintenance.planning import DeviceRef
from maintenance.services import MaintenanceError, maintenance_apply, maintenance_preview_start
from tests.maintenance.support import GPU, create, gpu_pods_on, preview_now, rules_in

pytestmark = pytest.mark.django_db


def blast(**overrides: Any) -> BlastRadius:
    values: dict[str, Any] = {"effect": "NoExecute", "preview_run": "r", "devices": 4, "whole_cluster": False,
                              "node_count": 1, "nodes": ["node-0"], "pods": 0}  # fmt: skip
    values.update(overrides)
    return BlastRadius(**values)


@pytest.mark.parametrize(
    ("case", "phrase"),
    [
        ({}, ""),  # nothing evicted: the checkbox is enough
        ({"effect": "NoSchedule", "pods": 0}, ""),
        ({"pods": 3, "pod_nodes": ["node-0"]}, "3"),
        ({"pods": 3, "pod_nodes": ["node-0"], "budgets": ["ml/trainer"]}, "node-0"),
        ({"pods": 5, "pod_nodes": ["node-0", "node-1"]}, "5 pods on 2 nodes"),
        ({"pods": 1, "pod_nodes": ["node-0", "node-1"], "budgets": ["ml/a"]}, "1 pod on 2 nodes"),
        ({"whole_cluster": True, "devices": 352, "pods": 47}, "every device in the cluster: 352"),
        ({"whole_cluster": True, "devices": 352, "effect": "NoSchedule"}, "every device in the cluster: 352"),
    ],
)
def test_it_scales_the_typed_phrase_to_the_blast_radius(case: dict[str, Any], phrase: str) -> None:
    assert challenge(blast(**case)).phrase == phrase


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ({"pods": 1, "pod_nodes": ["node-0"]}, "1 pod is evicted"),
        ({"pods": 3, "pod_nodes": ["node-0"]}, "3 pods are evicted"),
        ({"pods": 1, "pod_nodes": ["node-0"], "budgets": ["ml/a"]},
         "1 pod on node node-0 is evicted, breaking 1 PodDisruptionBudget"),
        ({"pods": 2, "pod_nodes": ["node-0", "node-1"]}, "2 pods on 2 nodes are evicted"),
    ],
)  # fmt: skip
def test_the_confirmation_says_what_is_evicted_in_plain_english(case: dict[str, Any], why: str) -> None:
    assert challenge(blast(**case)).why == why


def test_it_refuses_to_enforce_while_the_preview_runs(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    maintenance_preview_start(maintenance=m, user=operator)  # no worker picks it up in this test
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True)
    assert error.value.status == 409 and "still running" in error.value.errors[0].message
    assert rules_in(mirrored) == {}


def test_it_refuses_a_stale_preview_and_says_what_changed(mirrored: Any, operator: Any) -> None:
    node = max(("node-0", "node-1", "node-2"), key=lambda n: len(gpu_pods_on(mirrored, n)))
    pods = gpu_pods_on(mirrored, node)
    assert pods
    devices = [DeviceRef(d.driver, d.pool, d.name) for d in Device.objects.filter(driver=GPU, pool=node)]
    m = create(operator, devices=devices)
    run = preview_now(m, operator)
    victim = next(p for p in mirrored.store.list("pods") if p["metadata"]["uid"] in pods)
    mirrored.store.delete("pods", victim["metadata"]["name"], namespace=victim["metadata"]["namespace"])
    assert mirrored.controllers.wait_idle(20)
    mirrored.sync()

    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True,
                          typed=str(len(pods)), preview_id=str(run.pk))  # fmt: skip
    assert error.value.status == 409
    message = error.value.errors[0].message
    assert "stale" in message and (f"{GPU}/{node}/" in message or "claim" in message), message
    assert error.value.changes
    assert rules_in(mirrored) == {}
    refused = AuditEntry.objects.get(maintenance=m, action="refused")
    assert "stale" in refused.message

    fresh = preview_now(m, operator)  # a new preview over the cluster as it is now is accepted
    summary = fresh.result["summary"]
    typed = str(summary["evicted"]) if summary["evicted"] else ""
    maintenance_apply(maintenance=m, user=operator, effect="NoExecute", confirmed=True, typed=typed)
    assert {r["spec"]["taint"]["effect"] for r in rules_in(mirrored).values()} == {"NoExecute"}


def test_it_refuses_a_confirmation_of_an_older_preview(mirrored: Any, operator: Any) -> None:
    m = create(operator)
    first = preview_now(m, operator)
    preview_now(m, operator)
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(
            maintenance=m, user=operator, effect="NoSchedule", confirmed=True, preview_id=str(first.pk)
        )
    assert error.value.status == 409 and "latest preview" in error.value.errors[0].message


def test_it_asks_for_the_whole_cluster_phrase_when_every_device_is_selected(
    mirrored: Any, operator: Any
) -> None:
    everything = [DeviceRef(d, p, n) for d, p, n in Device.objects.values_list("driver", "pool", "name")]
    m = create(operator, devices=everything)  # selected one by one, not with an empty selector
    preview_now(m, operator)
    with pytest.raises(MaintenanceError) as error:
        maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True, typed="yes")
    assert error.value.errors[0].field == "typed"
    assert f'"every device in the cluster: {len(everything)}"' in error.value.errors[0].message
    assert rules_in(mirrored) == {}
    maintenance_apply(maintenance=m, user=operator, effect="NoSchedule", confirmed=True,
                      typed=f"Every device in the cluster:  {len(everything)}")  # fmt: skip
    confirm = AuditEntry.objects.get(maintenance=m, action="confirm")
    assert confirm.outcome["blast"]["whole_cluster"] is True
    assert confirm.outcome["phrase"] == f"every device in the cluster: {len(everything)}"
    assert len(rules_in(mirrored)) == len(m.rules)


def test_the_preview_counts_in_plain_english(mirrored: Any, operator: Any) -> None:
    """One device, one claim, one pod read in the singular; more in the plural."""
    from django.test import Client

    node = max(("node-0", "node-1", "node-2"), key=lambda n: len(gpu_pods_on(mirrored, n)))
    held = [d for d in Device.objects.filter(driver=GPU, pool=node) if d.allocations]
    assert held
    client = Client()
    client.force_login(operator)
    for devices in (held[:1], list(Device.objects.filter(driver=GPU, pool=node))):
        m = create(operator, devices=[DeviceRef(d.driver, d.pool, d.name) for d in devices])
        preview_now(m, operator)
        html = client.get(f"/maintenance/{m.id}/").content.decode()
        radius = html.split('id="blast-radius"', 1)[1].split("</ul>", 1)[0]
        n = len(devices)
        assert f"<strong>{n}</strong> device{'' if n == 1 else 's'}, " in radius
        for word, plural in (("allocated claim", "allocated claims"), ("pod", "pods")):
            for count, text in re.findall(rf"<strong>(\d+)</strong> ({word}s?)\b", radius):
                assert text == (word if count == "1" else plural), radius
        assert "1 pods" not in html and "1 allocated claims" not in html and "1 pod are" not in html


def test_the_preview_names_the_pods_it_would_evict_with_links(mirrored: Any, operator: Any) -> None:
    """ "2 pods would be evicted with NoExecute: ml/a, ml/b": the page names them (it gave the count alone,
    and only the run's page said which), each linked to its pod's page."""
    from django.test import Client

    node = max(("node-0", "node-1", "node-2"), key=lambda n: len(gpu_pods_on(mirrored, n)))
    pods = gpu_pods_on(mirrored, node)
    assert pods
    gpus = Device.objects.filter(driver=GPU, pool=node)
    m = create(operator, devices=[DeviceRef(d.driver, d.pool, d.name) for d in gpus])
    preview_now(m, operator)
    client = Client()
    client.force_login(operator)
    radius = client.get(f"/maintenance/{m.id}/").content.decode().split('id="blast-radius"', 1)[1]
    named = radius.split('id="blast-radius-pods">', 1)[1].split("</span>\n", 1)[0].split("</li>", 1)[0]
    links = re.findall(r'href="/pods/([^/"]+)/([^/"]+)/"', named)
    assert sorted(name for _, name in links) == sorted(pods.values())


def test_a_preview_evicting_many_pods_names_ten_and_counts_the_rest() -> None:
    from types import SimpleNamespace

    from maintenance.preview import EVICTED_PODS_NAMED, PreviewStatus

    pods = [{"namespace": "ml", "name": f"p-{i}", "evicted": i % 2 == 0} for i in range(30)]
    status = PreviewStatus(run=SimpleNamespace(result={"pods": pods, "summary": {"evicted": 15}}))
    assert [p["name"] for p in status.evicted_pods] == [f"p-{i}" for i in range(0, 20, 2)]
    assert len(status.evicted_pods) == EVICTED_PODS_NAMED and status.evicted_not_named == 5
    assert PreviewStatus().evicted_pods == [] and PreviewStatus().evicted_not_named == 0
