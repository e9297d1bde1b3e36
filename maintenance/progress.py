"""Read side of a maintenance: which pods an enforced taint affects, and how their eviction is going.

Everything comes from the mirror (the only way the UI learns about the cluster): pods, claims and the
rules' status conditions as the watch reported them.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from dra.taints import no_execute_delay
from maintenance.models import AuditEntry, Maintenance


def _selected(maintenance: Maintenance) -> set[tuple[str, str, str]] | None:
    if maintenance.every_device:
        return None
    return {(d["driver"], d["pool"], d["device"]) for d in maintenance.devices}


def _controller_owner(pod: dict[str, Any]) -> dict[str, Any]:
    for ref in pod.get("metadata", {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return {"uid": ref.get("uid", ""), "kind": ref.get("kind", ""), "name": ref.get("name", "")}
    return {}


def affected_pods(*, maintenance: Maintenance, taint_time: datetime) -> list[dict[str, Any]]:
    """Pods holding a selected device through a claim reserved for them, with their eviction time."""
    from inventory.models import Allocation, KubeObject

    taint = {"key": maintenance.taint_key, "value": maintenance.taint_value, "effect": "NoExecute"}
    selected = _selected(maintenance)
    allocations = Allocation.objects.all()
    if selected is not None:
        allocations = allocations.filter(
            driver__in={s[0] for s in selected},
            pool__in={s[1] for s in selected},
            device__in={s[2] for s in selected},
        )
    claim_devices: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for claim_uid, driver, pool, device in allocations.values_list("claim_uid", "driver", "pool", "device"):
        if selected is None or (driver, pool, device) in selected:
            claim_devices[claim_uid].add((driver, pool, device))
    if not claim_devices:
        return []

    pods: dict[str, dict[str, Any]] = {}
    for claim in KubeObject.objects.filter(kind="resourceclaims", uid__in=list(claim_devices)).only(
        "uid", "raw"
    ):
        raw = claim.raw
        results = raw.get("status", {}).get("allocation", {}).get("devices", {}).get("results") or []
        delays = [
            no_execute_delay(taint, r.get("tolerations") or [])
            for r in results
            if (r.get("driver"), r.get("pool"), r.get("device")) in claim_devices[claim.uid]
        ]
        finite = [d for d in delays if d is not None]
        delay = min(finite) if finite else None
        claim_name = f"{raw['metadata'].get('namespace', '')}/{raw['metadata'].get('name', '')}"
        for consumer in raw.get("status", {}).get("reservedFor") or []:
            if consumer.get("resource") != "pods":
                continue
            entry = pods.setdefault(
                consumer["uid"],
                {"uid": consumer["uid"], "name": consumer.get("name", ""), "namespace": raw["metadata"].get("namespace", ""),
                 "claims": [], "delay": None, "tolerated": True},
            )  # fmt: skip
            entry["claims"].append(claim_name)
            if delay is not None:
                entry["tolerated"] = False
                entry["delay"] = delay if entry["delay"] is None else min(entry["delay"], delay)

    owners = {
        obj.uid: _controller_owner(obj.raw)
        for obj in KubeObject.objects.filter(kind="pods", uid__in=list(pods)).only("uid", "raw")
    }
    affected = []
    for uid, entry in sorted(pods.items(), key=lambda kv: (kv[1]["namespace"], kv[1]["name"])):
        owner = owners.get(uid, {})
        evict_at = None if entry["tolerated"] else _stamp(taint_time + timedelta(seconds=entry["delay"]))
        affected.append(
            {"uid": uid, "name": entry["name"], "namespace": entry["namespace"], "claims": sorted(entry["claims"]),
             "owner_uid": owner.get("uid", ""), "owner": f"{owner.get('kind', '')}/{owner.get('name', '')}" if owner else "",
             "evict_at": evict_at}
        )  # fmt: skip
    return affected


def _stamp(moment: datetime) -> str:
    """RFC 3339 in UTC with a Z, as the API server writes timestamps (so strings sort by time)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{moment.microsecond:06d}Z" if moment.microsecond else "Z"
    )


def _pod_phase(pod: dict[str, Any]) -> str:
    status = pod.get("status", {})
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return "unschedulable" if condition.get("reason") == "Unschedulable" else "pending"
    phase = status.get("phase", "Pending")
    return {"Running": "running", "Succeeded": "running"}.get(phase, "pending")


def _disruption_time(pod: dict[str, Any]) -> str | None:
    for condition in pod.get("status", {}).get("conditions") or []:
        if condition.get("type") == "DisruptionTarget" and condition.get("status") == "True":
            return str(condition.get("lastTransitionTime") or "")
    return None


def maintenance_progress(*, maintenance: Maintenance, now: datetime) -> dict[str, Any]:
    """The state of every affected pod, the rules' conditions, counts and a timeline — one JSON document,
    sent on websocket connect, on every coalesced change, and to pollers."""
    from inventory.models import KubeObject

    affected = maintenance.affected or []
    uids = [p["uid"] for p in affected]
    # Only the fields the states need (not whole pod objects): this runs on every burst of evictions.
    current = {
        uid: {"metadata": {"deletionTimestamp": deleting}, "status": {"conditions": conditions or []}}
        for uid, deleting, conditions in KubeObject.objects.filter(kind="pods", uid__in=uids).values_list(
            "uid", "raw__metadata__deletionTimestamp", "raw__status__conditions"
        )
    }

    owner_uids = {p["owner_uid"] for p in affected if p.get("owner_uid")}
    namespaces = {p["namespace"] for p in affected}
    replacements: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if owner_uids and maintenance.enforced_at:
        # Replacements are the owners' pods created once the taint was enforced (creationTimestamp has
        # one-second resolution, hence the truncation), not their siblings that were already running.
        since = _stamp(maintenance.enforced_at.replace(microsecond=0))
        candidates = (
            KubeObject.objects.filter(kind="pods", namespace__in=namespaces, creation_timestamp__gte=since)
            .exclude(uid__in=uids)
            .order_by("creation_timestamp", "name")
            .values_list("raw__metadata", "raw__spec__nodeName", "raw__status")
        )
        for metadata, node, status in candidates:
            new_pod = {"metadata": metadata, "spec": {"nodeName": node or ""}, "status": status or {}}
            owner = _controller_owner(new_pod)
            if owner.get("uid") in owner_uids:
                replacements[owner["uid"]].append(new_pod)

    timeline: list[dict[str, Any]] = []
    pods_out: list[dict[str, Any]] = []
    counts = {"total": len(affected), "waiting": 0, "tolerating": 0, "evicting": 0, "gone": 0,
              "replacement_running": 0, "replacement_pending": 0, "replacement_unschedulable": 0}  # fmt: skip
    used: dict[str, int] = defaultdict(int)
    for pod in affected:
        raw = current.get(pod["uid"])
        disrupted = _disruption_time(raw) if raw else None
        if raw is None:
            state = "gone"
        elif disrupted is not None or raw.get("metadata", {}).get("deletionTimestamp"):
            state = "evicting"
        elif pod.get("evict_at") is None:
            state = "tolerating"
        else:
            state = "waiting"
        counts[state] += 1
        if disrupted:
            timeline.append(
                {"at": disrupted, "what": f"pod {pod['namespace']}/{pod['name']} marked for eviction"}
            )
        replacement = None
        if state == "gone" and pod.get("owner_uid"):
            options = replacements.get(pod["owner_uid"], [])
            index = used[pod["owner_uid"]]
            if index < len(options):
                used[pod["owner_uid"]] += 1
                new = options[index]
                replacement = {
                    "name": new["metadata"]["name"],
                    "state": _pod_phase(new),
                    "node": new.get("spec", {}).get("nodeName", ""),
                }
                counts[f"replacement_{replacement['state']}"] += 1
                timeline.append({"at": new["metadata"].get("creationTimestamp", ""),
                                 "what": f"replacement {new['metadata']['name']} created for {pod['owner']}"})  # fmt: skip
        seconds_left = None
        if state == "waiting" and pod.get("evict_at"):
            seconds_left = max(0.0, (datetime.fromisoformat(pod["evict_at"]) - now).total_seconds())
        pods_out.append({**pod, "state": state, "seconds_left": seconds_left, "replacement": replacement})

    rules = []
    names = [r["name"] for r in maintenance.rules]
    by_name = {
        o.name: o.raw
        for o in KubeObject.objects.filter(kind="devicetaintrules", name__in=names).only("name", "raw")
    }
    for name in names:
        raw = by_name.get(name)
        conditions = (raw or {}).get("status", {}).get("conditions") or []
        rules.append({"name": name, "present": raw is not None,
                      "effect": (raw or {}).get("spec", {}).get("taint", {}).get("effect", ""),
                      "conditions": conditions})  # fmt: skip
        for condition in conditions:
            timeline.append({"at": condition.get("lastTransitionTime", ""),
                             "what": f"rule {name}: {condition.get('type')}={condition.get('status')} "
                                     f"({condition.get('reason', '')}) {condition.get('message', '')}".strip()})  # fmt: skip
    for entry in AuditEntry.objects.filter(maintenance=maintenance).order_by("at")[:200]:
        timeline.append(
            {
                "at": _stamp(entry.at),
                "what": f"{entry.actor}: {entry.action} {entry.rule_name} {entry.message}".strip(),
            }
        )
    timeline.sort(key=lambda item: item["at"] or "")

    evicted = counts["gone"]
    evictable = counts["total"] - counts["tolerating"]
    return {
        "id": maintenance.id,
        "state": maintenance.state,
        "effect": maintenance.applied_effect,
        "enforced_at": _stamp(maintenance.enforced_at) if maintenance.enforced_at else None,
        "counts": counts,
        "percent": round(100.0 * evicted / evictable, 1) if evictable else 100.0,
        "complete": evictable == evicted,
        "pods": pods_out,
        "rules": rules,
        "timeline": timeline[-300:],
    }
