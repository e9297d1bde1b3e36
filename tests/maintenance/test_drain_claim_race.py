"""Two drivers claiming the same pod at the same instant: only one may send its eviction. On PostgreSQL the
second UPDATE waits for the first to commit and must then see the pod taken (a claim written as a join,
`id IN (SELECT …)`, is not re-checked there and lets both through)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections, transaction

from maintenance import states
from maintenance.drain import claim_pod
from maintenance.models import Drain, DrainPod, Maintenance

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_pod_claimed_by_two_drivers_at_once_goes_to_one(db: Any) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers; the race needs PostgreSQL's row locks")
    m = Maintenance.objects.create(
        title="t", reason="r", taint_key="example.com/m", target_effect="NoSchedule"
    )
    drain = Drain.objects.create(maintenance=m)
    pod = DrainPod.objects.create(drain=drain, order=0, uid="u-1", namespace="ml", name="trainer-0",
                                  state=states.WAITING)  # fmt: skip
    first_holds = threading.Event()
    second_started = threading.Event()
    results: dict[str, bool] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                results["a"] = claim_pod(pod_id=pod.pk, driver="driver-a")
                first_holds.set()
                second_started.wait(10)
                threading.Event().wait(0.5)  # the second UPDATE is now waiting for this row's lock
        finally:
            connections.close_all()

    def second() -> None:
        try:
            first_holds.wait(10)
            second_started.set()
            results["b"] = claim_pod(pod_id=pod.pk, driver="driver-b")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == {"a": True, "b": False}
    assert DrainPod.objects.get(pk=pod.pk).claimed_by == "driver-a"
