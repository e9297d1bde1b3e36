"""A batch whose transaction fails (the database went away mid-batch: pg_terminate_backend, a failover) is
retried by the write loop with the same writer. What the writer keeps in memory across batches must not
have moved with the rolled-back transaction: else the retry leaves rows as they were before, for good."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import OperationalError

from inventory.mirror.writer import BatchWriter, Event
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db


def sick_pod(rv: int) -> dict[str, Any]:
    report = {"resourceID": "gpu.example.com/node-0/gpu-1", "health": "Unhealthy", "message": "hot"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**f.meta("p", namespace="default", rv=rv), "uid": "pod-uid"},
        "spec": {"nodeName": "node-0"},
        "status": {
            "containerStatuses": [
                {"name": "c", "allocatedResourcesStatus": [{"name": "claim:c/gpu", "resources": [report]}]}
            ]
        },
    }


def test_a_pod_deletion_retried_after_a_failed_transaction_clears_its_device_health_report(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer = BatchWriter()
    writer.apply([Event("resourceslices", "ADDED", f.resource_slice("s0", devices=[f.gpu("gpu-1")]), "1")])
    writer.apply([Event("pods", "ADDED", sick_pod(2), "2")])
    assert f.device("gpu-1").health == "Unhealthy"

    deleted = [Event("pods", "DELETED", sick_pod(3), "3")]
    real = BatchWriter._write_watch_state

    def connection_lost(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(BatchWriter, "_write_watch_state", connection_lost)
    with pytest.raises(OperationalError):
        writer.apply(deleted)
    assert f.device("gpu-1").health == "Unhealthy", "rolled back"
    monkeypatch.setattr(BatchWriter, "_write_watch_state", real)
    writer.apply(deleted)  # the write loop's retry

    assert f.device("gpu-1").health == ""
    assert f.device("gpu-1").health_reports == {}
