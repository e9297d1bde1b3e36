"""Enforcing a maintenance while the Kubernetes API server does not answer (a control-plane restart, a
network cut between dradash and the cluster): a 503 whose message names the cluster's error — dradash
could not reach its upstream; the cluster refused nothing — with nothing half-applied: no DeviceTaintRule
left in the cluster, the maintenance still a draft with no write in flight, and the same enforce works
once the API server answers again. Over a real simcluster behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from maintenance import cluster as cluster_access
from maintenance.models import AuditEntry, Maintenance
from tests.faults import TcpCut
from tests.maintenance.support import create, preview_now, rules_in

pytestmark = pytest.mark.django_db(transaction=True)


def enforce(api: Client, m: Maintenance, run_id: str) -> Any:
    m.refresh_from_db()
    return api.post(
        f"/api/maintenance/{m.id}/apply/",
        {"effect": "NoSchedule", "confirm": True, "preview": run_id, "version": m.version},
        content_type="application/json",
    )


def test_enforcing_while_the_api_server_does_not_answer_is_a_503_naming_it_and_applies_nothing(
    mirrored: Any, operator: Any, cut: TcpCut
) -> None:
    api = Client()
    api.force_login(operator)
    m = create(operator)
    run = preview_now(m, operator)

    cut.cut()
    response = enforce(api, m, str(run.pk))
    body = response.json()
    assert response.status_code == 503, body
    message = body["errors"][0]["message"]
    assert body["errors"][0]["field"] == "cluster"
    assert message.startswith("cannot reach the Kubernetes API: "), message
    assert "refused" not in body["headline"] and "nothing was applied" in body["headline"], body["headline"]
    assert rules_in(mirrored) == {}
    m.refresh_from_db()
    assert (m.state, m.applied_effect, m.write_intent) == (Maintenance.DRAFT, "", {})
    assert "cannot reach the Kubernetes API" in str(m.last_error)
    assert AuditEntry.objects.filter(maintenance=m, action="failed").exists()

    cut.restore()
    response = enforce(api, m, str(run.pk))
    assert response.status_code == 200, response.json()
    assert {r["spec"]["taint"]["effect"] for r in rules_in(mirrored).values()} == {"NoSchedule"}
    m.refresh_from_db()
    assert (m.state, m.applied_effect) == (Maintenance.APPLIED, "NoSchedule")


def test_a_cut_between_two_rule_writes_says_which_rule_stayed_and_enforcing_again_finishes(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API server stops answering after the first of two rules is written: its rollback cannot reach
    the cluster either, so the answer must not say "nothing was applied" — it names the rule left — and
    the maintenance stays a draft that the same enforce, once the cluster answers, brings in line."""
    api = Client()
    api.force_login(operator)
    m = create(operator)
    assert len(m.rules) == 2
    run = preview_now(m, operator)
    real_create = cluster_access.create_rule

    def then_cut(obj: dict[str, Any], *, dry_run: bool, **kwargs: Any) -> dict[str, Any]:
        stored = real_create(obj, dry_run=dry_run, **kwargs)
        if not dry_run:
            cut.cut()
        return stored

    monkeypatch.setattr(cluster_access, "create_rule", then_cut)
    response = enforce(api, m, str(run.pk))
    body = response.json()
    assert response.status_code == 503, body
    assert body["errors"][0]["message"].startswith("cannot reach the Kubernetes API: "), body
    left = list(rules_in(mirrored))
    assert len(left) == 1
    assert "nothing was applied" not in body["headline"]
    assert f"1 rule could not be rolled back ({left[0]})" in body["headline"], body["headline"]
    m.refresh_from_db()
    assert (m.state, m.write_intent) == (Maintenance.DRAFT, {})
    assert f"could not roll back: {left[0]}" in m.last_error["message"]

    monkeypatch.setattr(cluster_access, "create_rule", real_create)
    cut.restore()
    response = enforce(api, m, str(run.pk))
    assert response.status_code == 200, response.json()
    assert sorted(rules_in(mirrored)) == sorted(r["name"] for r in m.rules)
    assert {r["spec"]["taint"]["effect"] for r in rules_in(mirrored).values()} == {"NoSchedule"}
    m.refresh_from_db()
    assert (m.state, m.applied_effect, m.last_error) == (Maintenance.APPLIED, "NoSchedule", {})


def test_undoing_while_the_api_server_does_not_answer_is_a_503_and_can_be_done_again(
    mirrored: Any, operator: Any, cut: TcpCut
) -> None:
    api = Client()
    api.force_login(operator)
    m = create(operator)
    run = preview_now(m, operator)
    assert enforce(api, m, str(run.pk)).status_code == 200

    cut.cut()
    m.refresh_from_db()
    undo = {"mode": "delete", "version": m.version}
    response = api.post(f"/api/maintenance/{m.id}/undo/", undo, content_type="application/json")
    body = response.json()
    assert response.status_code == 503, body
    assert "cannot reach the Kubernetes API: " in body["errors"][0]["message"], body
    assert sorted(rules_in(mirrored)) == sorted(r["name"] for r in m.rules)
    m.refresh_from_db()
    assert (m.state, m.write_intent) == (Maintenance.APPLIED, {})

    cut.restore()
    undo = {"mode": "delete", "version": m.version}
    response = api.post(f"/api/maintenance/{m.id}/undo/", undo, content_type="application/json")
    assert response.status_code == 200, response.json()
    assert rules_in(mirrored) == {}
