"""Read side of a maintenance: which pods an enforced taint affects, and how their eviction is going.

Everything comes from the mirror (the only way the UI learns about the cluster): pods, claims and the
rules' status conditions as the watch reported them.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from dra.disruption import BudgetError, disruptions_allowed, expected_and_desired
from dra.selection import label_selector_matches
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

    owners: dict[str, dict[str, Any]] = {}
    labels: dict[str, dict[str, str]] = {}
    for obj in KubeObject.objects.filter(kind="pods", uid__in=list(pods)).only("uid", "raw"):
        owners[obj.uid] = _controller_owner(obj.raw)
        labels[obj.uid] = dict(obj.raw.get("metadata", {}).get("labels") or {})
    affected = []
    for uid, entry in sorted(pods.items(), key=lambda kv: (kv[1]["namespace"], kv[1]["name"])):
        owner = owners.get(uid, {})
        evict_at = None if entry["tolerated"] else _stamp(taint_time + timedelta(seconds=entry["delay"]))
        # Labels are kept so the audit log can tell, once the pod is gone, which budgets it counted in.
        affected.append(
            {"uid": uid, "name": entry["name"], "namespace": entry["namespace"], "claims": sorted(entry["claims"]),
             "owner_uid": owner.get("uid", ""), "owner": f"{owner.get('kind', '')}/{owner.get('name', '')}" if owner else "",
             "evict_at": evict_at, "labels": labels.get(uid, {})}
        )  # fmt: skip
    return affected


def _healthy(pod_row: tuple[Any, Any, Any]) -> bool:
    _labels, phase, deleting = pod_row
    return phase == "Running" and not deleting


def affected_budgets(*, affected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The PodDisruptionBudgets selecting affected pods and how many disruptions each allows now (its
    status.disruptionsAllowed, else what minAvailable / maxUnavailable leave of the healthy pods).
    Device-taint eviction ignores budgets; the audit log reports the ones it broke."""
    from inventory.models import KubeObject

    evictable = [p for p in affected if p.get("evict_at") is not None]
    namespaces = {p["namespace"] for p in evictable}
    if not namespaces:
        return []
    budgets = []
    pods_by_ns: dict[str, list[tuple[Any, Any, Any]]] = defaultdict(list)
    for namespace, labels, phase, deleting in KubeObject.objects.filter(
        kind="pods", namespace__in=namespaces
    ).values_list(
        "namespace", "raw__metadata__labels", "raw__status__phase", "raw__metadata__deletionTimestamp"
    ):
        pods_by_ns[namespace].append((labels or {}, phase, deleting))
    for pdb in KubeObject.objects.filter(kind="poddisruptionbudgets", namespace__in=namespaces).only(
        "uid", "name", "namespace", "raw"
    ):
        spec, status = pdb.raw.get("spec") or {}, pdb.raw.get("status") or {}
        selector = spec.get("selector")
        if not selector:
            continue  # an empty selector selects no pod in policy/v1
        mine = [p["uid"] for p in evictable if p["namespace"] == pdb.namespace and label_selector_matches(
            selector, p.get("labels") or {})]  # fmt: skip
        if not mine:
            continue
        selected = [row for row in pods_by_ns[pdb.namespace] if label_selector_matches(selector, row[0])]
        healthy = sum(1 for row in selected if _healthy(row))
        allowed: int | None = None
        if isinstance(status.get("disruptionsAllowed"), int):
            allowed = status["disruptionsAllowed"]
        else:  # no controller's status yet: the controller's arithmetic, the selected pods as the scale
            scale = len(selected)
            try:
                expected, desired = expected_and_desired(
                    spec, selected=scale, expected_scale=functools.partial(int, scale)
                )
            except BudgetError:
                continue  # an invalid IntOrString: nothing to compare against
            if expected <= 0:
                continue
            allowed = disruptions_allowed(healthy=healthy, desired=desired, expected=expected)
        budgets.append(
            {"uid": pdb.uid, "namespace": pdb.namespace, "name": pdb.name, "allowed": allowed, "pods": mine}
        )
    return budgets


def owner_pods(*, affected: list[dict[str, Any]]) -> list[str]:
    """Every pod the affected pods' owners have now (so later ones are known to be replacements)."""
    from inventory.models import KubeObject

    owners = {p["owner_uid"] for p in affected if p.get("owner_uid")}
    if not owners:
        return []
    namespaces = {p["namespace"] for p in affected}
    return sorted(
        uid
        for uid, metadata in KubeObject.objects.filter(kind="pods", namespace__in=namespaces).values_list(
            "uid", "raw__metadata"
        )
        if _controller_owner({"metadata": metadata or {}}).get("uid") in owners
    )


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


PODS_SHOWN = 200
STATE_ORDER = {"evicting": 0, "waiting": 1, "gone": 2, "tolerating": 3}


def progress_bar(counts: dict[str, int]) -> dict[str, Any]:
    """The bar's fill and its label from the same two numbers, so they cannot disagree: pods evicted
    out of the pods the taint evicts (pods that tolerate it are not part of the bar)."""
    done, of = counts["evicted"], counts["to_evict"]
    label = f"{done} of {of} evicted" if of else "no pod to evict"
    return {"done": done, "of": of, "percent": round(100.0 * done / of, 1) if of else 0.0, "label": label}


def maintenance_progress(
    *, maintenance: Maintenance, now: datetime, pods_limit: int | None = PODS_SHOWN
) -> dict[str, Any]:
    """The state of every affected pod, the rules' conditions, counts and a timeline — one JSON document,
    sent on websocket connect, on every coalesced change, and to pollers. At most `pods_limit` pods are
    listed (those still in motion first); the counts cover them all."""
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
        # Replacements are the owners' pods created once the taint was enforced, not their siblings that
        # were already running (`owner_pods`; creationTimestamp has one-second resolution).
        since = _stamp(maintenance.enforced_at.replace(microsecond=0))
        candidates = (
            KubeObject.objects.filter(kind="pods", namespace__in=namespaces, creation_timestamp__gte=since)
            .exclude(uid__in=[*uids, *(maintenance.owner_pods or [])])
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
              "to_evict": 0, "evicted": 0,
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
        if pod.get("evict_at") is not None:
            counts["to_evict"] += 1
            counts["evicted"] += int(state == "gone")
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
                    "namespace": new["metadata"].get("namespace", ""),
                    "state": _pod_phase(new),
                    "node": new.get("spec", {}).get("nodeName", ""),
                }
                counts[f"replacement_{replacement['state']}"] += 1
                timeline.append({"at": new["metadata"].get("creationTimestamp", ""),
                                 "what": f"replacement {new['metadata']['name']} created for {pod['owner']}"})  # fmt: skip
        seconds_left = None
        if state == "waiting" and pod.get("evict_at"):
            seconds_left = max(0.0, (datetime.fromisoformat(pod["evict_at"]) - now).total_seconds())
        shown = {k: v for k, v in pod.items() if k != "labels"}
        pods_out.append({**shown, "state": state, "seconds_left": seconds_left, "replacement": replacement})

    rules = []
    names = [r["name"] for r in maintenance.rules]
    by_name = {
        o.name: o.raw
        for o in KubeObject.objects.filter(kind="devicetaintrules", namespace="", name__in=names).only(
            "name", "raw"
        )
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
    for entry in reversed(AuditEntry.objects.filter(maintenance=maintenance).order_by("-at", "-id")[:200]):
        timeline.append(
            {
                "at": _stamp(entry.at),
                "what": f"{entry.actor}: {entry.message or entry.get_action_display()}",
            }
        )
    timeline.sort(key=lambda item: item["at"] or "")

    if pods_limit is not None and len(pods_out) > pods_limit:
        pods_out.sort(key=lambda p: (STATE_ORDER.get(p["state"], 9), p["namespace"], p["name"]))
        pods_out = pods_out[:pods_limit]
    bar = progress_bar(counts)
    return {
        "id": maintenance.id,
        "state": maintenance.state,
        "effect": maintenance.applied_effect,
        "version": maintenance.version,
        "enforced_at": _stamp(maintenance.enforced_at) if maintenance.enforced_at else None,
        "counts": counts,
        "bar": bar,
        "percent": bar["percent"],
        "complete": counts["to_evict"] == counts["evicted"],
        "pods": pods_out,
        "pods_total": len(affected),
        "rules": rules[:PODS_SHOWN],
        "rules_total": len(rules),
        "timeline": timeline[-300:],
    }


def drain_evictions(*, maintenance: Maintenance) -> dict[str, Any] | None:
    """The pods the maintenance's drain evicted, in the shape `undo_consequences` reads from the drain's
    document (maintenance.drain.drain_document) — every pod, from the DrainPod rows."""
    from maintenance.models import DrainPod

    pods = [
        {"uid": p.uid, "namespace": p.namespace, "name": p.name, "state": p.state, "evicted": True,
         "replacement": {"name": p.replacement_name, "node": p.replacement_node} if p.replacement_name else None}
        for p in DrainPod.objects.filter(drain__maintenance=maintenance, evicted_at__isnull=False).order_by("order")
    ]  # fmt: skip
    return {"counts": {"evicted": len(pods)}, "pods": pods} if pods else None


def _replacement_text(r: dict[str, Any]) -> str:
    where = f" on {r['node']}" if r.get("node") else ""
    return f"{r.get('namespace') or r['pod'].split('/')[0]}/{r['name']} {r['state']}{where}"


def undo_consequences(*, progress: dict[str, Any], drain: dict[str, Any] | None = None) -> dict[str, Any]:
    """What undo does not undo: evicted pods stay evicted — those NoExecute evicted (`progress`) and those
    the drain evicted (`drain`, maintenance.drain's document) — and their replacements are wherever they
    are."""
    gone = [p for p in progress["pods"] if p["state"] == "gone" and p.get("evict_at") is not None]
    by_taint = int(progress["counts"]["evicted"])
    evicted_pods = [
        {"pod": f"{p['namespace']}/{p['name']}", "uid": p.get("uid", ""), "by": "NoExecute",
         "replacement": p.get("replacement")}
        for p in gone
    ]  # fmt: skip
    by_drain = 0
    if drain:
        by_drain = int(drain["counts"].get("evicted", 0))
        seen = {p["uid"] for p in evicted_pods}
        for p in drain["pods"]:
            if not p.get("evicted") or p["uid"] in seen:
                continue
            new = p.get("replacement")
            state = {"running": "running", "unschedulable": "unschedulable"}.get(p["state"], "pending")
            evicted_pods.append(
                {"pod": f"{p['namespace']}/{p['name']}", "uid": p["uid"], "by": "drain",
                 "replacement": {"name": new["name"], "namespace": p["namespace"], "state": state,
                                 "node": new.get("node", "")} if new else None}
            )  # fmt: skip
    evicted = by_taint + by_drain
    replacements = [{"pod": e["pod"], **e["replacement"]} for e in evicted_pods if e.get("replacement")]
    if not evicted:
        text = "No pod was evicted by this maintenance."
    else:
        shown = evicted_pods[:10]
        names = ", ".join(e["pod"] for e in shown)
        more = f" and {evicted - len(shown)} more" if evicted > len(shown) else ""
        how = []
        if by_drain:
            how.append(f"{by_drain} by the drain")
        if by_taint:
            how.append(f"{by_taint} by NoExecute")
        text = (
            f"Undo removes the taint; it does not bring evicted pods back: {evicted} pod"
            f"{'' if evicted == 1 else 's'} evicted by this maintenance ({', '.join(how)}) stay evicted"
            f"{f' ({names}{more})' if names else ''}."
        )
        if replacements:
            text += (
                " Replacements: "
                + "; ".join(_replacement_text(r) for r in replacements[:10])
                + ("; …" if len(replacements) > 10 else "")
                + "."
            )
        else:
            text += " No replacement pod exists for them."
    return {
        "evicted": evicted,
        "evicted_by_drain": by_drain,
        "evicted_by_noexecute": by_taint,
        "pods": [e["pod"] for e in evicted_pods[:200]],
        "replacements": replacements,
        "text": text,
    }


RULE_WRITES = ("create", "update", "delete", "seen-create", "seen-update", "seen-delete")
SEEN_OUTSIDE = ("seen-update", "seen-delete")


def rule_drift(*, maintenances: list[Maintenance]) -> dict[str, list[dict[str, Any]]]:
    """{maintenance id: [{rule, expected_effect, cluster_effect, what}]} for the applied (or draining)
    maintenances whose rules the cluster no longer has as dradash applied them: the last write the audit
    log knows of a rule was made outside dradash (seen by the mirror) and the mirror's rule differs —
    its effect changed, or it is gone. A rule someone set back is no drift, and neither is the mirror
    lagging behind dradash's own write (dradash's entry is then the last)."""
    from inventory.models import KubeObject

    live = {
        m.pk: m for m in maintenances if m.state in (Maintenance.APPLIED, "draining") and m.applied_effect
    }
    if not live:
        return {}
    suspects = set(
        AuditEntry.objects.filter(maintenance_id__in=list(live), action__in=SEEN_OUTSIDE)
        .values_list("maintenance_id", flat=True)
        .distinct()
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for pk in sorted(suspects):
        maintenance = live[pk]
        names = [r["name"] for r in maintenance.rules]
        latest: dict[str, str] = {}
        for name, action in (
            AuditEntry.objects.filter(maintenance=maintenance, action__in=RULE_WRITES)
            .order_by("id")
            .values_list("rule_name", "action")
        ):
            latest[name] = action
        mirrored = dict(
            KubeObject.objects.filter(kind="devicetaintrules", namespace="", name__in=names).values_list(
                "name", "raw__spec__taint__effect"
            )
        )
        expected = maintenance.applied_effect
        drift = []
        for name in names:
            if latest.get(name) not in SEEN_OUTSIDE:
                continue
            if name not in mirrored:
                drift.append({"rule": name, "expected_effect": expected, "cluster_effect": None,
                              "what": f"deleted outside dradash: its devices are no longer tainted {expected}"})  # fmt: skip
            elif mirrored[name] != expected:
                effect = str(mirrored[name] or "")
                serve = " (its devices serve again)" if effect == "None" else ""
                drift.append({"rule": name, "expected_effect": expected, "cluster_effect": effect,
                              "what": f"effect changed outside dradash to {effect}, not {expected}{serve}"})  # fmt: skip
        if drift:
            out[maintenance.pk] = drift
    return out


def drift_summary(drift: list[dict[str, Any]]) -> str:
    """One sentence for a header, a list row or a drain's message."""
    if not drift:
        return ""
    shown = "; ".join(f"{d['rule']}: {d['what']}" for d in drift[:5])
    more = f"; and {len(drift) - 5} more" if len(drift) > 5 else ""
    return f"the cluster differs from what dradash applied — {shown}{more}"
