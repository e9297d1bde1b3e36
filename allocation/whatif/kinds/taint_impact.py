"""Taint impact: what a proposed device taint would do, before anyone applies it.

Devices it selects, the allocated claims and pods on them, when each pod would be evicted (the taint
time plus the smallest matching NoExecute tolerationSeconds, as the eviction controller computes it),
the PodDisruptionBudgets that would be broken (device-taint eviction ignores them), whether each
evicted pod's claims could be allocated again on what remains, and which pending pods it would make
unschedulable. Maintenance shows this as its preview.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import (
    Budget,
    Context,
    Lookup,
    Progress,
    WhatIfInputError,
    WhatIfKind,
    no_progress,
    register,
)
from allocation.whatif.inputs import EFFECTS, refuse_unknown, text
from allocation.whatif.subject import Subject, resolve_pod_subject
from allocation.whatif.view import (
    AllocatorView,
    allocate_on,
    allocation_results,
    meta,
    node_names,
    with_allocation,
)
from dra.allocator import AllocationError, AllocationTimeout
from dra.selection import device_selector, label_selector_matches
from dra.taints import no_execute_delay

PROPOSED_RULE_NAME = "whatif-proposed-taint"


@dataclass
class AffectedPod:
    namespace: str
    name: str
    uid: str
    node: str
    claims: list[str]
    evicted: bool
    evict_at: str | None  # RFC 3339, None = never
    delay_seconds: float | None
    why: str
    reallocatable: bool | None = None  # None: not evicted, nothing to re-allocate
    reallocation: str = ""


@dataclass
class AffectedClaim:
    namespace: str
    name: str
    uid: str
    devices: list[str]
    reserved_for: list[str]


@dataclass
class BrokenBudget:
    namespace: str
    name: str
    current_healthy: int
    desired_healthy: int
    evicted: int
    pods: list[str]


@dataclass
class TaintImpact:
    selectors: list[dict[str, str]]
    taint: dict[str, Any]
    devices: list[str] = field(default_factory=list)
    claims: list[AffectedClaim] = field(default_factory=list)
    pods: list[AffectedPod] = field(default_factory=list)
    budgets: list[BrokenBudget] = field(default_factory=list)
    pending_unschedulable: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def evicted_pods(self) -> list[AffectedPod]:
        return [p for p in self.pods if p.evicted]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["summary"] = {
            "devices": len(self.devices),
            "claims": len(self.claims),
            "pods": len(self.pods),
            "evicted": len(self.evicted_pods),
            "budgets_broken": len(self.budgets),
            "pending_unschedulable": len(self.pending_unschedulable),
            "not_reallocatable": sum(1 for p in self.pods if p.reallocatable is False),
        }
        return data


def proposed_rule(*, selector: dict[str, str], taint: dict[str, Any], now: datetime, index: int = 0) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": f"{PROPOSED_RULE_NAME}-{index}", "uid": f"whatif-proposed-{index}"},
        "spec": {
            "deviceSelector": dict(selector),
            "taint": {**taint, "timeAdded": now.isoformat().replace("+00:00", "Z")},
        },
    }


def _current_devices(snapshot: Snapshot) -> list[tuple[str, str, str]]:
    """(driver, pool, device) of every device in its pool's highest generation."""
    top: dict[tuple[str, str], int] = {}
    for s in snapshot.slices:
        spec = s.get("spec") or {}
        key = (str(spec.get("driver")), str((spec.get("pool") or {}).get("name")))
        top[key] = max(top.get(key, 0), int((spec.get("pool") or {}).get("generation") or 0))
    out = []
    for s in snapshot.slices:
        spec = s.get("spec") or {}
        key = (str(spec.get("driver")), str((spec.get("pool") or {}).get("name")))
        if int((spec.get("pool") or {}).get("generation") or 0) != top[key]:
            continue
        out.extend((key[0], key[1], str(d.get("name"))) for d in spec.get("devices") or [])
    return sorted(set(out))


def _pods_by_uid(snapshot: Snapshot) -> dict[str, Obj]:
    return {str(meta(p).get("uid")): p for p in snapshot.pods}


def _is_pending(pod: Obj) -> bool:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    return (
        not spec.get("nodeName")
        and not meta(pod).get("deletionTimestamp")
        and status.get("phase") in (None, "", "Pending")
    )


def taint_impact_compute(
    *,
    snapshot: Snapshot,
    selectors: list[dict[str, str]],
    taint: dict[str, Any],
    now: datetime,
    progress: Progress = no_progress,
    budget: Budget | None = None,
) -> TaintImpact:
    effect = taint.get("effect")
    rules = [proposed_rule(selector=sel, taint=taint, now=now, index=i) for i, sel in enumerate(selectors)]
    impact = TaintImpact(selectors=[dict(s) for s in selectors], taint=dict(rules[0]["spec"]["taint"]))
    if any(not sel for sel in selectors):
        impact.notes.append("an empty selector selects every device")
    progress("selecting devices", 0, 4)
    parsed = [device_selector(sel) for sel in selectors]
    tainted = {d for d in _current_devices(snapshot) if any(sel.selects(*d) for sel in parsed)}
    impact.devices = ["/".join(d) for d in sorted(tainted)]

    pods = _pods_by_uid(snapshot)
    evict_at_by_pod: dict[str, tuple[float | None, list[str], list[str]]] = {}
    for claim in snapshot.allocated_claims:
        hits = [
            r
            for r in allocation_results(claim)
            if (r.get("driver"), r.get("pool"), r.get("device")) in tainted
        ]
        if not hits:
            continue
        reserved = [
            r
            for r in (claim.get("status") or {}).get("reservedFor") or []
            if r.get("resource", "pods") == "pods"
        ]
        m = meta(claim)
        impact.claims.append(
            AffectedClaim(
                namespace=str(m.get("namespace", "")),
                name=str(m.get("name", "")),
                uid=str(m.get("uid", "")),
                devices=[f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}" for r in hits],
                reserved_for=[str(r.get("name")) for r in reserved],
            )
        )
        # Claim eviction delay: earliest over its tainted results (None = tolerated forever).
        delays = [no_execute_delay(impact.taint, r.get("tolerations") or []) for r in hits]
        finite = [d for d in delays if d is not None]
        claim_delay = min(finite) if finite else None
        for ref in reserved:
            uid = str(ref.get("uid"))
            previous = evict_at_by_pod.get(uid)
            names = [*(previous[1] if previous else []), str(m.get("name"))]
            claim_uids = [*(previous[2] if previous else []), str(m.get("uid"))]
            if previous is None or previous[0] is None:
                best = claim_delay
            elif claim_delay is None:
                best = previous[0]
            else:
                best = min(previous[0], claim_delay)
            evict_at_by_pod[uid] = (best, names, claim_uids)

    progress("computing evictions", 1, 4)
    for uid, (delay, claim_names, _) in sorted(evict_at_by_pod.items()):
        pod = pods.get(uid)
        if pod is None:
            continue  # reserved for a pod the mirror does not have (gone already)
        m, spec = meta(pod), pod.get("spec") or {}
        scheduled = bool(spec.get("nodeName")) and not m.get("deletionTimestamp")
        if effect != "NoExecute":
            evicted, why = (
                False,
                f"effect {effect} does not evict"
                + (
                    " (with NoExecute it would be evicted)"
                    if effect == "None" and delay is not None and scheduled
                    else ""
                ),
            )
        elif not scheduled:
            evicted, why = False, "pod is not running on a node (not scheduled or already being deleted)"
        elif delay is None:
            evicted, why = False, "a NoExecute toleration without tolerationSeconds tolerates the taint"
        else:
            evicted = True
            why = "no NoExecute toleration: evicted at once" if delay == 0 else f"tolerated for {delay:g} s"
        impact.pods.append(
            AffectedPod(
                namespace=str(m.get("namespace", "")),
                name=str(m.get("name", "")),
                uid=uid,
                node=str(spec.get("nodeName", "")),
                claims=claim_names,
                evicted=evicted,
                evict_at=(now + timedelta(seconds=delay)).isoformat(timespec="seconds")
                if evicted and delay is not None
                else None,
                delay_seconds=delay if evicted else None,
                why=why,
            )
        )
    impact.pods.sort(key=lambda p: (p.evict_at or "~", p.namespace, p.name))

    progress("checking disruption budgets", 2, 4)
    for pdb in snapshot.pdbs:
        m, status = meta(pdb), pdb.get("status") or {}
        ns = m.get("namespace", "")
        selector_ = (pdb.get("spec") or {}).get("selector")
        hit = [
            p
            for p in impact.evicted_pods
            if p.namespace == ns and label_selector_matches(selector_, meta(pods[p.uid]).get("labels") or {})
        ]
        if not hit:
            continue
        current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
        if current - len(hit) < desired:
            impact.budgets.append(
                BrokenBudget(
                    namespace=str(ns),
                    name=str(m.get("name", "")),
                    current_healthy=current,
                    desired_healthy=desired,
                    evicted=len(hit),
                    pods=[p.name for p in hit],
                )
            )

    progress("re-allocating evicted pods' claims", 3, 4)
    evicted_claim_uids = {u for p in impact.evicted_pods for u in evict_at_by_pod[p.uid][2]}
    view = AllocatorView.build(
        snapshot, exclude_claim_uids=evicted_claim_uids, extra_taint_rules=rules, budget=budget
    )
    nodes = node_names(snapshot)
    for i, pod_entry in enumerate(impact.evicted_pods):
        progress("re-allocating evicted pods' claims", 3, 4)
        subject = resolve_pod_subject(pods[pod_entry.uid], snapshot, release_uids=evicted_claim_uids)
        placed_on: list[tuple[str, str, str]] = []
        placed = _place_anywhere(
            view, subject, nodes=nodes, uid_prefix=f"whatif-realloc-{i}", devices=placed_on
        )
        pod_entry.reallocatable = placed is not None
        if placed is None:
            pod_entry.reallocation = "no node has room for its claims once the taint is applied"
        elif tainted.intersection(placed_on):
            # Its tolerations let the scheduler use tainted devices again: evicted again when they run out.
            pod_entry.reallocation = (
                f"fits on node {placed}, but on devices with this taint (tolerated for a time)"
            )
        else:
            pod_entry.reallocation = f"fits on node {placed}"

    progress("checking pending pods", 3, 4)
    view_before = AllocatorView.build(snapshot, budget=budget)
    view_after = AllocatorView.build(snapshot, extra_taint_rules=rules, budget=budget)
    for pod in snapshot.pods:
        if not _is_pending(pod):
            continue
        subject = resolve_pod_subject(pod, snapshot)
        if subject.blockers or not (subject.claims or subject.extended):
            continue
        try:
            if _place_anywhere(view_after, subject, nodes=nodes, record=False) is not None:
                continue
            before = _place_anywhere(view_before, subject, nodes=nodes, record=False)
        except AllocationTimeout:
            raise
        except AllocationError:
            continue
        if before is not None:
            impact.pending_unschedulable.append(
                {"namespace": subject.namespace, "name": subject.name, "fits_now_on": before}
            )
    progress("done", 4, 4)
    return impact


def _place_anywhere(
    view: AllocatorView,
    subject: Subject,
    *,
    nodes: list[str],
    uid_prefix: str = "whatif",
    record: bool = True,
    devices: list[tuple[str, str, str]] | None = None,
) -> str | None:
    """The first node where the subject's claims fit; with `record`, their devices become in use.

    An inventory pod the allocator refuses (its own bad claim) fits nowhere; running out of the
    run's budget stops the whole run."""
    for node in nodes:
        node_obj = view.node_obj(node)
        if subject.node_allows(node_obj, ignore_bound_node=True):
            continue
        claims, _ = subject.claims_for(node_obj)
        if not claims:
            return node
        try:
            results = allocate_on(view, node=node, claims=claims)
        except AllocationTimeout:
            raise
        except AllocationError as exc:
            if exc.node_local:
                continue  # this node only (an invalid pool); the next one may fit
            return None
        if results is not None:
            if devices is not None:
                for allocation in results:
                    devices.extend(
                        (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
                        for r in (allocation.get("devices") or {}).get("results") or []
                    )
            if record:
                for n, (claim, allocation) in enumerate(zip(claims, results, strict=True)):
                    view.add_allocated(with_allocation(claim, allocation, uid=f"{uid_prefix}-{n}"))
            return node
    return None


# --------------------------------------------------------------------------- the kind

#: maintenance writes one DeviceTaintRule per device; a big maintenance previews them all at once
MAX_SELECTORS = 10_000


def _selector(raw: object, field: str) -> dict[str, str]:
    if not isinstance(raw, Mapping):
        raise WhatIfInputError(field, "must be an object with driver, pool and/or device")
    unknown = set(raw) - {"driver", "pool", "device"}
    if unknown:
        raise WhatIfInputError(field, f"unknown field(s) {', '.join(sorted(unknown))}")
    limits = {"driver": 63, "pool": 253, "device": 63}
    selector = {k: text(raw, k, f"{field}.{k}", required=False, max_len=n) for k, n in limits.items()}
    return {k: v for k, v in selector.items() if v}


def normalize_taint_input(raw: Mapping[str, Any]) -> dict[str, Any]:
    """One `selector`, or `selectors` (one DeviceTaintRule each, as maintenance writes them), and a taint."""
    refuse_unknown(raw, {"selector", "selectors", "taint"})
    if "selectors" in raw:
        many = raw["selectors"]
        if not isinstance(many, list) or not many or len(many) > MAX_SELECTORS:
            raise WhatIfInputError("input.selectors", f"must be a list of 1 to {MAX_SELECTORS} selectors")
        selectors = [_selector(s, f"input.selectors[{i}]") for i, s in enumerate(many)]
    elif "selector" in raw:
        selectors = [_selector(raw["selector"], "input.selector")]
    else:
        raise WhatIfInputError("input.selector", "is required: an object with driver, pool and/or device")
    taint = raw.get("taint")
    if not isinstance(taint, Mapping):
        raise WhatIfInputError("input.taint", "is required: an object with key, value and effect")
    key = text(taint, "key", "input.taint.key", max_len=316)
    if " " in key or key.count("/") > 1:
        raise WhatIfInputError("input.taint.key", "must be a qualified name (prefix/name, no spaces)")
    value = text(taint, "value", "input.taint.value", required=False, max_len=63)
    effect = text(taint, "effect", "input.taint.effect", max_len=16)
    if effect not in EFFECTS:
        raise WhatIfInputError("input.taint.effect", f"must be one of {', '.join(EFFECTS)}, got {effect!r}")
    return {"selectors": selectors, "taint": {"key": key, "value": value, "effect": effect}}


def taint_impact(
    *,
    selector: dict[str, str] | None = None,
    selectors: list[dict[str, str]] | None = None,
    taint: dict[str, Any],
    now: datetime,
    snapshot: Snapshot,
) -> TaintImpact:
    """What a proposed device taint would do, computed here and now: one `selector`, or several
    `selectors` (one DeviceTaintRule each). Raises WhatIfInputError for a bad selector or taint."""
    raw: dict[str, Any] = {"taint": taint}
    if selectors is not None:
        raw["selectors"] = selectors
    elif selector is not None:
        raw["selector"] = selector
    data = normalize_taint_input(raw)
    return taint_impact_compute(snapshot=snapshot, selectors=data["selectors"], taint=data["taint"], now=now)


def _normalize(raw: Mapping[str, Any], lookup: Lookup) -> dict[str, Any]:
    return normalize_taint_input(raw)


def _answer(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    impact = taint_impact_compute(
        snapshot=ctx.snapshot,
        selectors=data["selectors"],
        taint=data["taint"],
        now=ctx.now,
        progress=ctx.progress,
        budget=ctx.budget,
    )
    if not impact.devices:  # a typo in a name is not "no impact": say which selector found nothing
        selectors = data["selectors"]
        field = "input.selector" if len(selectors) == 1 else "input.selectors"
        named = ", ".join(f"{k} {v}" for k, v in selectors[0].items() if v) or "every device"
        raise WhatIfInputError(
            field, f"selects no device in the inventory ({named}): check the driver, pool and device names"
        )
    return impact.to_json()


def _form_input(post: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "selector": {k: str(post.get(k, "")).strip() for k in ("driver", "pool", "device")},
        "taint": {
            "key": str(post.get("key", "")).strip(),
            "value": str(post.get("value", "")).strip(),
            "effect": post.get("effect", ""),
        },
    }


KIND = register(
    WhatIfKind(
        name="taint_impact",
        label="Taint impact",
        template="allocation/kinds/taint_impact.html",
        normalize=_normalize,
        answer=_answer,
        form_input=_form_input,
        input_help="{selector: {driver, pool, device}} or {selectors: [...]}, taint: {key, value, effect}",
        order=30,
    )
)
