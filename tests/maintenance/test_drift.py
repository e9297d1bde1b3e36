"""A dradash rule changed outside dradash (kubectl patch of its effect, kubectl delete): the maintenance
page, the list and the API say the cluster differs from what dradash applied, from the mirror — so an
operator does not read "applied with effect NoSchedule" while the devices serve again."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from maintenance.services import maintenance_apply
from tests.kubectl import run_kubectl
from tests.maintenance.support import create, preview_now

pytestmark = pytest.mark.django_db(transaction=True)  # the mirror's hook runs after its commits


def kubectl(cluster: Any, *args: str) -> None:
    done = run_kubectl(cluster.kubeconfig_path, *args)
    assert done.returncode == 0, done.stderr


def _effect(cluster: Any, name: str, effect: str) -> None:
    kubectl(cluster, "patch", "devicetaintrule", name, "--type=merge", "-p",
            json.dumps({"spec": {"taint": {"effect": effect}}}))  # fmt: skip
    cluster.sync()


def test_a_rule_changed_or_deleted_outside_dradash_shows_as_drift(mirrored: Any, operator: Any) -> None:
    m = create(operator, effect="NoSchedule")
    run = preview_now(m, operator)
    maintenance_apply(
        maintenance=m, user=operator, effect="NoSchedule", confirmed=True, preview_id=str(run.pk)
    )
    mirrored.sync()
    client = Client()
    client.force_login(operator)
    name = m.rules[0]["name"]

    def looks() -> tuple[dict[str, Any], str, str, list[dict[str, Any]]]:
        detail = client.get(f"/api/maintenance/{m.id}/").json()
        listed = next(i for i in client.get("/api/maintenance/").json()["results"] if i["id"] == m.id)
        return (detail, client.get(f"/maintenance/{m.id}/").content.decode(),
                client.get("/maintenance/").content.decode(), listed["drift"])  # fmt: skip

    detail, page, index, listed = looks()
    assert detail["drift"] == [] and listed == [] and 'id="m-drift"' not in page
    assert "changed outside dradash" not in index

    _effect(mirrored, name, "None")
    detail, page, index, listed = looks()
    assert detail["applied_effect"] == "NoSchedule"  # what dradash applied …
    assert detail["drift"] == listed == [  # … and what the cluster has
        {"rule": name, "expected_effect": "NoSchedule", "cluster_effect": "None",
         "what": "effect changed outside dradash to None, not NoSchedule (its devices serve again)"}
    ]  # fmt: skip
    assert 'id="m-drift"' in page and "Changed outside dradash." in page and 'id="m-drift-flag"' in page
    assert "those devices are not out of service" in page
    assert f'changed outside dradash: <bdi class="k8s word">{name}</bdi> now None' in index
    live = client.get(f"/maintenance/{m.id}/progress.json").json()
    assert live["drift_key"] == f"{name}=None"

    _effect(mirrored, name, "NoSchedule")  # set back by hand: no drift
    detail, page, _, _ = looks()
    assert detail["drift"] == [] and 'id="m-drift"' not in page

    kubectl(mirrored, "delete", "devicetaintrule", name)
    mirrored.sync()
    detail, page, index, _ = looks()
    assert [(d["rule"], d["cluster_effect"]) for d in detail["drift"]] == [(name, None)]
    assert "deleted outside dradash" in detail["drift"][0]["what"] and "deleted outside dradash" in page
    assert f"{name}</bdi> deleted" in index
    # a drain's "the rules stay with effect NoSchedule" is not left standing either
    from maintenance.drain import ABORT_MESSAGE, _with_drift

    said = _with_drift(m, ABORT_MESSAGE)
    assert (
        said.startswith(ABORT_MESSAGE)
        and "But since then the cluster differs from what dradash applied" in said
    )
    assert f"{name}: deleted outside dradash" in said
