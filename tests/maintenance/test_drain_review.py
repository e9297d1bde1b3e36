"""What an operator reads about a drain (the reviewer's walk through the demo): the undo card and the
audit log count the pods the drain evicted; while a budget blocks, the ETA says so instead of a number;
one drain panel, not two contradictory ones; after an abort the pods not evicted say so; the audit log
records a budget's refusals once per pod, with how often it refused, not once per retry."""

from __future__ import annotations

from typing import Any

from django.test import Client
from django.utils import timezone

from maintenance import states
from maintenance.drain import drain_document, maintenance_drain_abort, maintenance_drain_start
from maintenance.models import AuditEntry, Drain, DrainPod
from tests.maintenance.drain_support import drain_ready, step_until, trainer_nodes
from tests.maintenance.test_drain import _set_min_available, demo  # noqa: F401  (the fixture)


def _page(user: Any, m: Any) -> str:
    client = Client()
    client.force_login(user)
    return str(client.get(f"/maintenance/{m.id}/").content.decode())


def test_undo_after_a_drain_says_which_evicted_pods_stay_evicted(demo: Any, operator: Any) -> None:  # noqa: F811
    m, run, phrase = drain_ready(operator, trainer_nodes(demo)[:1])
    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run,
                            concurrency=8)  # fmt: skip
    step_until(
        m, demo.sync, until=lambda: Drain.objects.get(maintenance=m).state == Drain.COMPLETE, timeout=60
    )
    demo.sync()
    evicted = DrainPod.objects.filter(drain__maintenance=m, evicted_at__isnull=False)
    count = evicted.count()
    assert count == 5
    html = _page(operator, m)
    card = html.split('id="undo-consequences">')[1].split("</p>")[0]
    assert "No pod was evicted" not in card
    assert f"{count} pods evicted by this maintenance ({count} by the drain) stay evicted" in card
    first = evicted.order_by("order").first()
    assert first is not None and f"{first.namespace}/{first.name}" in card
    assert f"{first.replacement_name} running on {first.replacement_node}" in card
    assert "Download the rule as YAML" in html and "Download all 1 rule" not in html

    client = Client()
    client.force_login(operator)
    m.refresh_from_db()
    assert (
        client.post(f"/maintenance/{m.id}/undo/", {"mode": "delete", "version": m.version}).status_code == 302
    )
    entry = AuditEntry.objects.filter(maintenance=m, action="undo").latest("id")
    assert entry.message.startswith("undone: 1 rule deleted. Undo removes the taint"), entry.message
    assert "No pod was evicted" not in entry.message and entry.outcome["evicted_by_drain"] == count
    undone = _page(operator, m).split('id="undo-consequences">')[1].split("</p>")[0]
    assert f"{count} pods evicted by this maintenance" in undone and "No pod was evicted" not in undone


def _blocked_drain(cluster: Any, operator: Any) -> tuple[Any, Any]:
    """The busiest trainer node drained at once while ml/trainer allows no disruption (minAvailable 12 of
    12), stepped until every trainer was refused a few times."""
    m, run, phrase = drain_ready(operator, trainer_nodes(cluster)[:1])
    html = _page(operator, m)
    assert "an estimate: each wave takes its pods&#x27; termination grace period" in html
    _set_min_available(cluster, 12)
    assert cluster.controllers.wait_idle(20)
    maintenance_drain_start(maintenance=m, user=operator, confirmed=True, typed=phrase, preview_id=run,
                            concurrency=50)  # fmt: skip
    trainers = DrainPod.objects.filter(drain__maintenance=m, owner__startswith="ReplicaSet/trainer")

    def refused_often() -> bool:
        now = list(trainers.all())
        return len(now) == 4 and all(p.state == states.BLOCKED and p.attempts >= 3 for p in now)

    step_until(m, cluster.sync, until=refused_often, timeout=60)
    return m, trainers


def test_while_a_budget_blocks_the_eta_says_so_and_the_audit_log_does_not_flood(
    demo: Any,  # noqa: F811
    operator: Any,
) -> None:
    m, trainers = _blocked_drain(demo, operator)
    doc = drain_document(maintenance=m, now=timezone.now())
    assert doc is not None
    assert doc["eta_seconds"] is None and doc["eta"].startswith(
        "none while blocked: waiting for PDB ml/trainer"
    )
    assert doc["waiting_for"] == ["ml/trainer"]
    assert "ETA about" not in doc["summary"] and "4 pods blocked by PDB" in doc["summary"]
    blocked_rows = [p for p in doc["pods"] if p["state"] == "blocked"]
    assert len(blocked_rows) == 4 and all("(refused " in p["reason"] for p in blocked_rows)
    html = _page(operator, m)
    assert "ETA none while blocked: waiting for PDB ml/trainer" in html.split('id="drain-summary"')[1][:400]
    # one drain panel: the NoExecute progress (nothing enforced with NoExecute) folds away
    assert '<div id="noexecute-progress" hidden>' in html
    assert 'id="progress-drain-note">' in html
    # the audit log: the first refusal of each pod, not one entry per retry
    attempts = sum(p.attempts for p in trainers.all())
    refusals = AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=429)
    assert attempts >= 12 and refusals.count() == 4, (attempts, refusals.count())
    assert sorted(refusals.values_list("object_uid", flat=True)) == sorted(p.uid for p in trainers.all())

    m.refresh_from_db()
    maintenance_drain_abort(maintenance=m, user=operator, expected_version=m.version)
    doc = drain_document(maintenance=m, now=timezone.now())
    assert doc is not None and doc["eta"] == "none (aborted)"
    rows = [p for p in doc["pods"] if p["owner"].startswith("ReplicaSet/trainer")]
    assert {p["label"] for p in rows} == {"not evicted (drain aborted)"}
    assert all("aborted before its eviction" in p["reason"] for p in rows)
    assert "4 not evicted (drain aborted)" in doc["summary"] and "blocked by PDB" not in doc["summary"]
    html = _page(operator, m)
    assert "blocked by PDB" not in html.split('id="drain-summary"')[1].split("</p>")[0]
    entry = AuditEntry.objects.filter(maintenance=m, action="drain").latest("id")
    assert entry.message.startswith("drain aborted") and "4 pods not evicted" in entry.message
    assert "blocked 3 times over" in entry.message or "blocked 4 times over" in entry.message, entry.message


def test_an_eviction_after_refusals_says_how_often_the_budget_refused(demo: Any, operator: Any) -> None:  # noqa: F811
    m, trainers = _blocked_drain(demo, operator)
    _set_min_available(demo, 10)
    step_until(
        m, demo.sync, until=lambda: Drain.objects.get(maintenance=m).state == Drain.COMPLETE, timeout=60
    )
    accepted = AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=201,
                                         object_uid__in=[p.uid for p in trainers.all()])  # fmt: skip
    assert accepted.count() == 4
    for entry in accepted:
        assert " after blocked " in entry.message and "by PDB ml/trainer" in entry.message, entry.message
        assert entry.outcome["refused"]["times"] >= 3
    refusals = AuditEntry.objects.filter(maintenance=m, action="eviction", outcome__status=429)
    assert refusals.count() < sum(p.attempts for p in trainers.all()) - 4
