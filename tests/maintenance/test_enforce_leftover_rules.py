"""Rules a failed enforce left in the cluster: the API server stops answering after the first of two
rules is written, so the rollback cannot delete it either. The rule is in the cluster while the
maintenance is a draft again; the maintenance records it (page, API), the drain driver's loop removes it
once the cluster answers, "Remove them now" removes it at once (or says the cluster still does not
answer), and the maintenance cannot be deleted while it holds the only record of it. Over a real
simcluster behind a TCP cut (tests/faults.py)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.test import Client

from maintenance import cluster as cluster_access
from maintenance.driver import DrainDriver
from maintenance.leftovers import AUTOMATIC_ACTOR
from maintenance.models import AuditEntry, LeftoverRulesError, Maintenance
from tests.faults import TcpCut
from tests.maintenance.conftest import user_in
from tests.maintenance.support import create, preview_now, rules_in

pytestmark = pytest.mark.django_db(transaction=True)


def enforce(api: Client, m: Maintenance, run_id: str) -> Any:
    m.refresh_from_db()
    return api.post(
        f"/api/maintenance/{m.id}/apply/",
        {"effect": "NoSchedule", "confirm": True, "preview": run_id, "version": m.version},
        content_type="application/json",
    )


def leave_a_rule(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> tuple[Client, Maintenance, str, str]:
    """Enforce NoSchedule and cut the API server after the first rule is written: (client, maintenance,
    preview run, the rule left in the cluster). The cut stays."""
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
    assert response.status_code == 503, response.json()
    monkeypatch.setattr(cluster_access, "create_rule", real_create)
    left = list(rules_in(mirrored))
    assert len(left) == 1
    m.refresh_from_db()
    assert m.state == Maintenance.DRAFT
    return api, m, str(run.pk), left[0]


def test_it_records_the_rule_the_rollback_left_and_the_api_shows_it(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, m, _, left = leave_a_rule(mirrored, operator, cut, monkeypatch)
    in_cluster = rules_in(mirrored)[left]
    [record] = m.leftover_rules
    assert (record["name"], record["effect"], record["previous"]) == (left, "NoSchedule", None)
    assert record["uid"] == in_cluster["metadata"]["uid"]
    assert record["by"] == operator.username and record["at"]
    assert "cannot reach the Kubernetes API" in record["error"]

    detail = api.get(f"/api/maintenance/{m.id}/").json()
    assert [r["name"] for r in detail["leftover_rules"]] == [left]
    listed = api.get("/api/maintenance/").json()["results"]
    assert [r["name"] for r in listed[0]["leftover_rules"]] == [left]
    live = api.get(f"/api/maintenance/{m.id}/progress/").json()
    assert "remove-leftovers" in live["actions"]
    assert [r["name"] for r in live["leftover_rules"]] == [left]


def test_the_page_shows_the_rule_left_in_the_cluster_with_a_confirmed_remove_button(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, m, _, left = leave_a_rule(mirrored, operator, cut, monkeypatch)
    page = Client(enforce_csrf_checks=True)
    page.force_login(operator)
    html = page.get(f"/maintenance/{m.id}/").content.decode()
    box = html[html.index('id="m-leftovers"') :]
    box = box[: box.index("</div>")]
    assert "1 rule left in the cluster by a failed enforce" in box
    assert re.search(rf"<code><bdi[^>]*>{left}</bdi></code> with effect <strong>NoSchedule</strong>", box), (
        box
    )
    assert "left in the cluster by a failed enforce at <time" in box
    form = box[box.index('id="remove-leftovers-form"') :]
    assert f'action="/maintenance/{m.id}/remove-leftovers/"' in box
    assert 'name="csrfmiddlewaretoken"' in form and 'method="post"' in box
    assert re.search(r'<input type="checkbox" name="confirm" value="yes" required', form)
    assert "Remove them now" in form
    assert "nothing is tainted yet" not in html
    listed = page.get("/maintenance/").content.decode()
    assert "1 rule left in the cluster by a failed enforce" in listed

    viewer = Client()
    viewer.force_login(user_in("viewer", "vera"))
    seen = viewer.get(f"/maintenance/{m.id}/").content.decode()
    assert f">{left}</bdi></code> with effect" in seen and "Remove them now" not in seen
    # no CSRF token: refused before anything is written
    assert page.post(f"/maintenance/{m.id}/remove-leftovers/", {"confirm": "yes"}).status_code == 403
    assert left in rules_in(mirrored)


def test_remove_them_now_is_a_503_while_the_cluster_does_not_answer_and_removes_the_rule_once_it_does(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, m, _, left = leave_a_rule(mirrored, operator, cut, monkeypatch)
    url = f"/api/maintenance/{m.id}/remove-leftovers/"
    response = api.post(url, {"version": m.version}, content_type="application/json")
    assert response.status_code == 400, response.json()
    assert response.json()["errors"][0]["field"] == "confirm"

    response = api.post(url, {"confirm": True, "version": m.version}, content_type="application/json")
    body = response.json()
    assert response.status_code == 503, body
    assert body["errors"][0]["field"] == "cluster"
    assert body["errors"][0]["message"].startswith("cannot reach the Kubernetes API: "), body
    assert body["headline"].startswith(
        "Cannot reach the Kubernetes API; 1 rule left by the failed enforce is still"
    ), body
    assert left in body["headline"]
    assert left in rules_in(mirrored)
    m.refresh_from_db()
    assert [r["name"] for r in m.leftover_rules] == [left]
    assert m.write_intent == {}

    cut.restore()
    page = Client()
    page.force_login(operator)
    response = page.post(f"/maintenance/{m.id}/remove-leftovers/", {"confirm": "yes", "version": m.version})
    assert response.status_code == 302
    assert rules_in(mirrored) == {}
    m.refresh_from_db()
    assert (m.leftover_rules, m.state, m.write_intent) == ([], Maintenance.DRAFT, {})
    entry = AuditEntry.objects.get(
        maintenance=m, action="delete", rule_name=left, message__contains="by hand"
    )
    assert entry.actor == operator.username
    assert "left in the cluster with effect NoSchedule by the failed enforce" in entry.message
    html = page.get(f"/maintenance/{m.id}/").content.decode()
    assert 'id="m-leftovers"' not in html and "nothing is tainted yet" in html
    response = api.post(url, {"confirm": True, "version": m.version}, content_type="application/json")
    assert response.status_code == 409, response.json()


def test_the_drain_driver_removes_the_left_rule_once_the_cluster_answers(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, m, _, left = leave_a_rule(mirrored, operator, cut, monkeypatch)
    version = m.version
    idle = DrainDriver(leftover_every=0)
    assert idle.retry_leftovers() == 0  # the cluster still does not answer
    m.refresh_from_db()
    assert (m.version, [r["name"] for r in m.leftover_rules]) == (version, [left])  # the page stays current
    assert left in rules_in(mirrored)

    cut.restore()
    driver = DrainDriver(every=0.05, leftover_every=0).start()
    try:
        deadline = time.monotonic() + 30
        while Maintenance.objects.get(pk=m.pk).leftover_rules and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        driver.stop()
    m.refresh_from_db()
    assert (m.leftover_rules, m.state) == ([], Maintenance.DRAFT)
    assert rules_in(mirrored) == {}
    entry = AuditEntry.objects.get(
        maintenance=m, action="delete", rule_name=left, message__contains="automatically"
    )
    assert entry.actor == AUTOMATIC_ACTOR


def test_enforcing_again_writes_every_rule_and_clears_the_record(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, m, run_id, left = leave_a_rule(mirrored, operator, cut, monkeypatch)
    assert [r["name"] for r in m.leftover_rules] == [left]
    cut.restore()
    assert enforce(api, m, run_id).status_code == 200
    m.refresh_from_db()
    assert (m.state, m.leftover_rules) == (Maintenance.APPLIED, [])
    assert sorted(rules_in(mirrored)) == sorted(r["name"] for r in m.rules)


def test_a_maintenance_that_left_rules_is_not_deleted_until_they_are_removed(
    mirrored: Any, operator: Any, cut: TcpCut, monkeypatch: pytest.MonkeyPatch
) -> None:
    api, m, _, left = leave_a_rule(mirrored, operator, cut, monkeypatch)
    with pytest.raises(LeftoverRulesError, match=f"left 1 rule in the cluster \\({left}\\)"):
        m.delete()
    with pytest.raises(LeftoverRulesError):
        Maintenance.objects.filter(pk=m.pk).delete()
    assert Maintenance.objects.filter(pk=m.pk).exists()

    cut.restore()
    m.refresh_from_db()
    url = f"/api/maintenance/{m.id}/remove-leftovers/"
    assert (
        api.post(url, {"confirm": True, "version": m.version}, content_type="application/json").status_code
        == 200
    )
    Maintenance.objects.get(pk=m.pk).delete()
    assert not Maintenance.objects.filter(pk=m.pk).exists()
