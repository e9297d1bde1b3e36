"""What an operator reads about a drain (the reviewer's walk through the demo): the undo card and the
audit log count the pods the drain evicted; while a budget blocks, the ETA says so instead of a number;
one drain panel, not two contradictory ones; after an abort the pods not evicted say so; the audit log
records a budget's refusals once per pod, with how often it refused, not once per retry."""

from __future__ import annotations

from typing import Any

from django.test import Client

from maintenance.drain import maintenance_drain_start
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
