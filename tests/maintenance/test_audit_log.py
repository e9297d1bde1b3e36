"""The audit log as an operator reads it: filterable (maintenance, actor, action, rule, time), paginated,
exportable as CSV that a spreadsheet will not execute, in the API, and live."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from maintenance.audit import record
from maintenance.models import AuditEntry
from maintenance.routing import websocket_urlpatterns

pytestmark = pytest.mark.django_db


def entry(**fields: Any) -> AuditEntry:
    values: dict[str, Any] = {"action": "create", "actor": "olivia", "rule_name": "r1", "message": "m"}
    values.update(fields)
    return record(**values)


def test_it_filters_by_actor_action_rule_and_time(operator_client: Client) -> None:
    old = entry(actor="kubectl-edit", action="seen-update", rule_name="by-hand", source="cluster")
    AuditEntry.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=3))
    entry(actor="olivia", action="create", rule_name="dradash-m1-node-0")
    entry(
        actor="gpu.example.com", action="driver-taint", subject="gpu.example.com/node-1/gpu-2", rule_name=""
    )

    def api(query: str) -> list[str]:
        response = operator_client.get(f"/api/maintenance/audit/?{query}")
        assert response.status_code == 200, response.content
        return [e["actor"] for e in response.json()["results"]]

    assert api("actor=kubectl-edit") == ["kubectl-edit"]
    assert api("action=driver-taint") == ["gpu.example.com"]
    assert api("rule=node-0") == ["olivia"]
    assert api("subject=gpu-2") == ["gpu.example.com"]
    since = (timezone.now() - timedelta(days=1)).date().isoformat()
    assert sorted(api(f"since={since}")) == ["gpu.example.com", "olivia"]
    assert api(f"until={(timezone.now() - timedelta(days=2)).date().isoformat()}") == ["kubectl-edit"]
    page = operator_client.get("/maintenance/audit/?actor=kubectl-edit").content.decode()
    assert "by-hand" in page and "dradash-m1-node-0" not in page


@pytest.mark.parametrize(("query", "field"), [("since=yesterday", "since"), ("action=nuke", "action"),
                                              ("actr=olivia", "actr"), ("source=kubectl", "source"),
                                              ("until=2026-99-99", "until"),  # well-formed, no such date
                                              ("since=2026-11-29T25:00:00Z", "since")])  # fmt: skip
def test_it_refuses_filters_it_does_not_understand(operator_client: Client, query: str, field: str) -> None:
    response = operator_client.get(f"/api/maintenance/audit/?{query}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field
    page = operator_client.get(f"/maintenance/audit/?{query}")
    assert page.status_code == 400  # as the Devices and Pods pages answer a refused filter
    assert field in page.content.decode() and "No entries." in page.content.decode()
    assert operator_client.get(f"/maintenance/audit/?{query}&fragment=table").status_code == 400


def test_it_paginates_the_api(operator_client: Client) -> None:
    for i in range(7):
        entry(rule_name=f"r{i}")
    first = operator_client.get("/api/maintenance/audit/?limit=3").json()
    assert first["count"] == 7 and len(first["results"]) == 3 and first["next"]
    assert first["results"][0]["rule_name"] == "r6"  # newest first


def test_it_exports_csv_that_a_spreadsheet_will_not_run(operator_client: Client) -> None:
    entry(
        actor='=HYPERLINK("http://evil")', message="+1+cmd|' /C calc'!A0", rule_name="-2", subject="@SUM(A1)"
    )
    for url in ("/maintenance/audit/?format=csv", "/api/maintenance/audit/export.csv"):
        response = operator_client.get(url)
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert rows[0]["actor"] == '\'=HYPERLINK("http://evil")'
        assert (
            rows[0]["message"].startswith("'+1")
            and rows[0]["rule"] == "'-2"
            and rows[0]["subject"] == "'@SUM(A1)"
        )


def test_it_shows_every_kind_of_entry_with_its_label(operator_client: Client) -> None:
    entry(action="pdb-broken", subject="ml/trainer", message="PodDisruptionBudget ml/trainer broken")
    page = operator_client.get("/maintenance/audit/").content.decode()
    assert "budget broken" in page and "ml/trainer" in page
    assert 'data-live-ws="/ws/maintenance-audit/"' in page and 'data-live-kinds="audit"' in page


@pytest.mark.django_db(transaction=True)
async def test_it_tells_the_live_audit_page_about_new_entries(django_user_model: Any) -> None:
    from asgiref.sync import sync_to_async

    from maintenance.audit import announce

    user = await sync_to_async(django_user_model.objects.create_user)("reader", password="x")
    communicator = WebsocketCommunicator(URLRouter(websocket_urlpatterns), "/ws/maintenance-audit/",
                                         headers=[(b"host", b"127.0.0.1")])  # fmt: skip
    communicator.scope["user"] = user
    connected, _ = await communicator.connect()
    assert connected
    hello = await communicator.receive_json_from(timeout=5)
    assert hello == {"type": "hello", "version": "0"}

    def write() -> int:
        created = entry()
        announce()
        return created.pk

    pk = await sync_to_async(write)()
    changed = await communicator.receive_json_from(timeout=5)
    assert changed == {"type": "changed", "kinds": ["audit"], "version": str(pk)}
    await communicator.disconnect()


def test_it_counts_one_matching_entry_in_english(operator_client: Client) -> None:
    entry(rule_name="only-one")
    entry(rule_name="another")
    page = operator_client.get("/maintenance/audit/?rule=only-one").content.decode()
    assert "1 entry matches · newest first" in page
    assert "2 entries · newest first" in operator_client.get("/maintenance/audit/").content.decode()


def test_the_maintenance_list_is_live_on_the_audit_socket(operator_client: Client) -> None:
    """The list listens to the audit log's socket (every change of a maintenance is an entry) and its table
    is served alone for the refresh."""
    page = operator_client.get("/maintenance/").content.decode()
    assert 'data-live-ws="/ws/maintenance-audit/"' in page
    assert 'id="maintenance-live" data-live-kinds="audit"' in page
    fragment = operator_client.get("/maintenance/?fragment=table").content.decode()
    assert fragment.lstrip().startswith("<div") and 'id="maintenance-table"' in fragment
    assert "<html" not in fragment and "No maintenance yet." in fragment
