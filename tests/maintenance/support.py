"""Steps shared by the maintenance tests."""

from __future__ import annotations

from typing import Any

from allocation.services import whatif_run_execute
from maintenance.models import Maintenance
from maintenance.planning import DeviceRef
from maintenance.services import Draft, maintenance_create, maintenance_preview_start

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


def preview_now(maintenance: Maintenance, user: Any) -> Any:
    """Start the preview and run it here, as the worker would."""
    run = maintenance_preview_start(maintenance=maintenance, user=user)
    whatif_run_execute(run_id=str(run.pk))
    run.refresh_from_db()
    assert run.state == "succeeded", run.error
    maintenance.refresh_from_db()
    return run


def create(user: Any, **overrides: Any) -> Maintenance:
    return maintenance_create(user=user, draft=draft(**overrides))


def rules_in(cluster: Any) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in cluster.store.list("devicetaintrules")}


def gpu_pods_on(cluster: Any, node: str) -> dict[str, str]:
    """uid → name of the pods holding a GPU of `node` through a claim."""
    pods: dict[str, str] = {}
    for claim in cluster.store.list("resourceclaims"):
        results = claim.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
        if any(r["pool"] == node and r["driver"] == GPU for r in results):
            pods.update({r["uid"]: r["name"] for r in claim["status"].get("reservedFor", [])})
    return pods
