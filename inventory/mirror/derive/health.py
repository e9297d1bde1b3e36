"""Device health: pods' allocatedResourcesStatus reports, else a driver taint named like `…/unhealthy`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from inventory.mirror import sql
from inventory.mirror.derive.common import JSON, DeviceKey, devices_by_keys
from inventory.models import Device

HEALTH_FIELDS = ["health", "health_message", "health_reports"]


HEALTH_ORDER = {"Unhealthy": 3, "Unknown": 2, "Healthy": 1}


def fill_health(row: Device) -> None:
    """Pods' reports win (worst first); else a driver taint named like `…/unhealthy` marks it Unhealthy."""
    reports = row.health_reports or {}
    if reports:
        worst = max(reports.values(), key=lambda r: HEALTH_ORDER.get(str(r.get("health")), 0))
        row.health = str(worst.get("health", ""))
        row.health_message = str(worst.get("message", "") or worst.get("pod", ""))
        return
    for taint in row.slice_taints or []:
        key = str(taint.get("key", ""))
        if "unhealthy" in key.rpartition("/")[2].lower():
            row.health = "Unhealthy"
            row.health_message = f"{key}={taint.get('value', '')} ({taint.get('effect', '')})"
            return
    row.health = ""
    row.health_message = ""


def pod_health_reports(pod: Mapping[str, Any]) -> dict[DeviceKey, JSON]:
    """Device health a pod's containers report (ResourceHealthStatus), keyed by device.

    DRA resource IDs are read as `<driver>/<pool>/<device>`; a pool name may itself contain slashes.
    """
    meta = pod.get("metadata") or {}
    pod_name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    reports: dict[DeviceKey, JSON] = {}
    status = pod.get("status") or {}
    for container in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        for resource_status in container.get("allocatedResourcesStatus") or []:
            if not str(resource_status.get("name", "")).startswith("claim:"):
                continue
            for resource in resource_status.get("resources") or []:
                parts = str(resource.get("resourceID", "")).split("/")
                if len(parts) < 3:
                    continue
                key = (parts[0], "/".join(parts[1:-1]), parts[-1])
                reports[key] = {
                    "pod": pod_name,
                    "health": str(resource.get("health", "Unknown")),
                    "message": str(resource.get("message", "") or ""),
                }
    return reports


def refresh_health(changed_pods: dict[str, JSON | None], reporting: dict[str, set[DeviceKey]]) -> None:
    """Apply pods' health reports; `reporting` (pod uid → device keys) is kept by the mirror across batches."""
    updates: dict[DeviceKey, dict[str, JSON | None]] = defaultdict(dict)
    for uid, pod in changed_pods.items():
        new = pod_health_reports(pod) if pod is not None else {}
        old_keys = reporting.get(uid, set())
        for key in old_keys - set(new):
            updates[key][uid] = None
        for key, report in new.items():
            updates[key][uid] = report
        if new:
            reporting[uid] = set(new)
        else:
            reporting.pop(uid, None)
    if not updates:
        return
    changed = []
    for device in devices_by_keys(set(updates)):
        reports = dict(device.health_reports or {})
        for uid, report in updates[(device.driver, device.pool, device.name)].items():
            if report is None:
                reports.pop(uid, None)
            else:
                reports[uid] = report
        device.health_reports = reports
        fill_health(device)
        changed.append(device)
    sql.update(Device, changed, fields=HEALTH_FIELDS)
