"""Taint impact: what a proposed device taint would do, before anyone applies it.

Devices it selects, the allocated claims and pods on them, when each pod would be evicted (the taint
time plus the smallest matching NoExecute tolerationSeconds, as the eviction controller computes it),
the PodDisruptionBudgets that would be broken (device-taint eviction ignores them), whether each
evicted pod's claims could be allocated again on what remains, and which pending pods it would make
unschedulable. Maintenance shows this as its preview.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

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
from allocation.whatif.fingerprint import attribute_filter, claims_key, node_fingerprint
from allocation.whatif.inputs import EFFECTS, check_format, refuse_unknown, text
from allocation.whatif.shards import SHARD_KINDS, run_sharded, shard_queue, shardable
from allocation.whatif.subject import Subject, resolve_pod_subject
from allocation.whatif.view import (
    AllocatorView,
    allocate_on,
    allocation_results,
    meta,
    node_names,
    with_allocation,
)
from dra import names
from dra.allocator import AllocationError, AllocationTimeout
from dra.selection import DeviceSelector, device_selector, label_selector_matches
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


def _selected(
    devices: list[tuple[str, str, str]], selectors: list[DeviceSelector]
) -> set[tuple[str, str, str]]:
    """The devices some selector selects. Indexed by which fields a selector names: a maintenance of
    5,000 nodes writes 5,000 selectors, and 100,000 devices × 5,000 selectors is minutes."""
    by_mask: dict[tuple[bool, bool, bool], set[tuple[str | None, str | None, str | None]]] = {}
    for sel in selectors:
        if sel.present:
            by_mask.setdefault(sel.mask, set()).add((sel.driver, sel.pool, sel.device))
    return {
        d
        for d in devices
        if any(
            (d[0] if m[0] else None, d[1] if m[1] else None, d[2] if m[2] else None) in keys
            for m, keys in by_mask.items()
        )
    }


def _pods_by_uid(snapshot: Snapshot) -> dict[str, Obj]:
    return {str(meta(p).get("uid")): p for p in snapshot.pods}


def _is_pending(pod: Obj) -> bool:
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    return (
        not spec.get("nodeName")
        and not meta(pod).get("deletionTimestamp")
        and status.get("phase") in (None, "", "Pending")
    )


@dataclass
class _Evictions:
    """What a taint does before anything is placed again: the impact so far (devices, claims, pods,
    budgets) and what the placing needs."""

    impact: TaintImpact
    rules: list[Obj]
    tainted: set[tuple[str, str, str]]
    pods: dict[str, Obj]
    evicted_claim_uids: set[str]


# Where one node scan ended (JSON, so a shard's answer travels through Redis): None when no node of
# the scan took it, or ["fit", node, [[driver, pool, device], ...]], ["error"] (the allocator refused
# the pod's own claims: it fits nowhere), ["raise"] (refused before allocating: the pod is skipped).
Outcome = list[Any] | None
#: a pending pod's "before" not computed: its scan found where it fits after the taint
_SKIPPED = ["skipped"]
#: the scans of contiguous node shards, in node order, given how to scan some nodes here
Scans = Callable[[Callable[[list[str]], dict[str, Any]]], list[tuple[list[str], dict[str, Any]]]]


def taint_impact_compute(
    *,
    snapshot: Snapshot,
    selectors: list[dict[str, str]],
    taint: dict[str, Any],
    now: datetime,
    progress: Progress = no_progress,
    budget: Budget | None = None,
    scans: Scans | None = None,
) -> TaintImpact:
    """`scans(scan_here)`: the node scans (`taint_impact_scan`) of contiguous shards of the nodes, in
    node order, some perhaps computed elsewhere (`allocation.whatif.shards`), `scan_here(nodes)` here;
    by default one scan of every node, here."""
    evictions = _evictions(snapshot=snapshot, selectors=selectors, taint=taint, now=now, progress=progress)
    progress("re-allocating evicted pods' claims", 3, 4)

    def scan_here(nodes: list[str]) -> dict[str, Any]:
        return _scan(snapshot, evictions, nodes=nodes, budget=budget, progress=progress)

    nodes = node_names(snapshot)
    parts = scans(scan_here) if scans is not None else [(nodes, scan_here(nodes))]
    _merge(snapshot, evictions, parts, budget=budget)
    progress("done", 4, 4)
    return evictions.impact


def taint_impact_scan(
    *,
    snapshot: Snapshot,
    selectors: list[dict[str, str]],
    taint: dict[str, Any],
    now: datetime,
    nodes: list[str],
    budget: Budget | None = None,
) -> dict[str, Any]:
    """The node scan of taint impact over `nodes` only (one shard)."""
    evictions = _evictions(snapshot=snapshot, selectors=selectors, taint=taint, now=now)
    return _scan(snapshot, evictions, nodes=nodes, budget=budget)


def _evictions(
    *,
    snapshot: Snapshot,
    selectors: list[dict[str, str]],
    taint: dict[str, Any],
    now: datetime,
    progress: Progress = no_progress,
) -> _Evictions:
    effect = taint.get("effect")
    rules = [proposed_rule(selector=sel, taint=taint, now=now, index=i) for i, sel in enumerate(selectors)]
    impact = TaintImpact(selectors=[dict(s) for s in selectors], taint=dict(rules[0]["spec"]["taint"]))
    if any(not sel for sel in selectors):
        impact.notes.append("an empty selector selects every device")
    progress("selecting devices", 0, 4)
    tainted = _selected(_current_devices(snapshot), [device_selector(sel) for sel in selectors])
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

    evicted_claim_uids = {u for p in impact.evicted_pods for u in evict_at_by_pod[p.uid][2]}
    return _Evictions(impact, rules, tainted, pods, evicted_claim_uids)


def _pending_subjects(snapshot: Snapshot) -> list[Subject]:
    """The pending pods whose claims a taint could keep from being allocated, in snapshot order."""
    out = []
    for pod in snapshot.pods:
        if not _is_pending(pod):
            continue
        subject = resolve_pod_subject(pod, snapshot)
        if subject.blockers or not (subject.claims or subject.extended):
            continue
        out.append(subject)
    return out


def _scan(
    snapshot: Snapshot,
    evictions: _Evictions,
    *,
    nodes: list[str],
    budget: Budget | None,
    offered: set[int] | None = None,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Where, among `nodes`, each evicted pod would be placed again (in order, each placement counting
    for the next; only the pods in `offered` when given) and where each pending pod fits after the
    taint and, unless it fits after, before it: one Outcome each."""
    view = AllocatorView.build(
        snapshot,
        exclude_claim_uids=evictions.evicted_claim_uids,
        extra_taint_rules=evictions.rules,
        budget=budget,
    )
    realloc: list[Outcome] = []
    for i, pod_entry in enumerate(evictions.impact.evicted_pods):
        if offered is not None and i not in offered:
            realloc.append(None)
            continue
        progress("re-allocating evicted pods' claims", 3, 4)
        subject = resolve_pod_subject(
            evictions.pods[pod_entry.uid], snapshot, release_uids=evictions.evicted_claim_uids
        )
        realloc.append(_outcome(view, subject, nodes=nodes, uid_prefix=f"whatif-realloc-{i}"))
    pending: list[list[Outcome]] = []
    progress("checking pending pods", 3, 4)
    subjects = _pending_subjects(snapshot)
    if not subjects:
        return {"realloc": realloc, "pending": pending}  # no views to build for nobody
    view_before = AllocatorView.build(snapshot, budget=budget)
    view_after = AllocatorView.build(snapshot, extra_taint_rules=evictions.rules, budget=budget)
    for subject in subjects:
        after = _outcome(view_after, subject, nodes=nodes, record=False)
        decided = after is not None and after[0] in ("fit", "raise")
        pending.append(
            [after, _SKIPPED if decided else _outcome(view_before, subject, nodes=nodes, record=False)]
        )
    return {"realloc": realloc, "pending": pending}


def _outcome(
    view: AllocatorView,
    subject: Subject,
    *,
    nodes: list[str],
    uid_prefix: str = "whatif",
    record: bool = True,
) -> Outcome:
    """The first of `nodes` where the subject's claims fit; with `record`, their devices become in use.

    A node that looks like one already found not to fit (`node_fingerprint`, the same claims) is not
    tried: nothing is placed until the scan ends, so it cannot fit either. A pod that fits nowhere
    on 10,000 nodes of a few kinds costs a few allocator calls (and parsed allocators), not 10,000.

    An inventory pod the allocator refuses (its own bad claim) fits nowhere; running out of the
    run's budget stops the whole run. Refused before allocating: raised with `record` (the
    re-allocation fails as it always has), else ["raise"] (a pending pod is skipped)."""
    keep_attributes = attribute_filter(view.snapshot, subject.claims)
    misfits: set[tuple[str, tuple[str, ...]]] = set()
    try:
        for node in nodes:
            node_obj = view.node_obj(node)
            if subject.node_allows(node_obj, ignore_bound_node=True):
                continue
            claims, _ = subject.claims_for(node_obj)
            if not claims:
                return ["fit", node, []]
            key = (
                node_fingerprint(
                    view, node, with_labels=bool(view.shared_pools), keep_attributes=keep_attributes
                ),
                claims_key(claims, per_node=bool(subject.extended)),
            )
            if key in misfits:
                continue
            try:
                results = allocate_on(view, node=node, claims=claims)
            except AllocationTimeout:
                raise
            except AllocationError as exc:
                if exc.node_local:
                    misfits.add(key)
                    continue  # this node only (an invalid pool); the next one may fit
                return ["error"]
            if results is None:
                misfits.add(key)
                continue
            if record:
                for n, (claim, allocation) in enumerate(zip(claims, results, strict=True)):
                    view.add_allocated(with_allocation(claim, allocation, uid=f"{uid_prefix}-{n}"))
            devices = [
                [str(r.get("driver")), str(r.get("pool")), str(r.get("device"))]
                for allocation in results
                for r in (allocation.get("devices") or {}).get("results") or []
            ]
            return ["fit", node, devices]
    except AllocationTimeout:
        raise
    except AllocationError:
        if record:
            raise
        return ["raise"]
    return None


def _merge(
    snapshot: Snapshot,
    evictions: _Evictions,
    parts: list[tuple[list[str], dict[str, Any]]],
    *,
    budget: Budget | None,
) -> None:
    """Fill in the impact from the scans of contiguous node shards, as one scan of all nodes would.

    A pod goes to the first shard whose scan took it. A shard's scan offered it every evicted pod,
    also those an earlier shard took: where it placed one of those, its later placements may be
    wrong (the devices that pod took were not free), so that shard is scanned again here with only
    the pods still unplaced. Pending pods need no such check (nothing is recorded for them)."""
    impact, tainted = evictions.impact, evictions.tainted
    evicted = impact.evicted_pods
    placed: list[Outcome] = [None] * len(evicted)
    decided: set[int] = set()
    for nodes, part in parts:
        outcomes = part["realloc"]
        if any(outcomes[i] is not None and outcomes[i][0] == "fit" for i in decided):
            offered = set(range(len(evicted))) - decided
            outcomes = _scan(snapshot, evictions, nodes=nodes, budget=budget, offered=offered)["realloc"]
        for i, outcome in enumerate(outcomes):
            if i not in decided and outcome is not None:
                decided.add(i)
                placed[i] = outcome
    for pod_entry, outcome in zip(evicted, placed, strict=True):
        pod_entry.reallocatable = outcome is not None and outcome[0] == "fit"
        if outcome is None or outcome[0] != "fit":
            pod_entry.reallocation = "no node has room for its claims once the taint is applied"
        elif tainted.intersection((d[0], d[1], d[2]) for d in outcome[2]):
            # Its tolerations let the scheduler use tainted devices again: evicted again when they run out.
            pod_entry.reallocation = (
                f"fits on node {outcome[1]}, but on devices with this taint (tolerated for a time)"
            )
        else:
            pod_entry.reallocation = f"fits on node {outcome[1]}"

    view_before: AllocatorView | None = None
    for j, subject in enumerate(_pending_subjects(snapshot)):
        after = _first(part["pending"][j][0] for _nodes, part in parts)
        if after is not None and after[0] in ("fit", "raise"):
            continue
        before: Outcome = None
        for nodes, part in parts:
            before = part["pending"][j][1]
            if before == _SKIPPED:  # this shard's scan stopped where the pod fits after the taint
                view_before = view_before or AllocatorView.build(snapshot, budget=budget)
                before = _outcome(view_before, subject, nodes=nodes, record=False)
            if before is not None:
                break
        if before is not None and before[0] == "fit":
            impact.pending_unschedulable.append(
                {"namespace": subject.namespace, "name": subject.name, "fits_now_on": before[1]}
            )


def _first(outcomes: Iterator[Outcome]) -> Outcome:
    return next((o for o in outcomes if o is not None), None)


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
        raise WhatIfInputError("input.selector", "is required — an object with driver, pool and/or device")
    taint = raw.get("taint")
    if not isinstance(taint, Mapping):
        raise WhatIfInputError("input.taint", "is required — an object with key, value and effect")
    key = text(taint, "key", "input.taint.key", max_len=317)  # a 253-byte prefix, '/', a 63-byte name
    check_format(key, "input.taint.key", names.qualified_name_errors)
    value = text(taint, "value", "input.taint.value", required=False, max_len=63)
    check_format(value, "input.taint.value", names.label_value_errors)
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
        scans=_sharded_scans(data, ctx),
    )
    if not impact.devices:  # a typo in a name is not "no impact": say which selector found nothing
        selectors = data["selectors"]
        field = "input.selector" if len(selectors) == 1 else "input.selectors"
        named = ", ".join(f"{k} {v}" for k, v in selectors[0].items() if v) or "every device"
        raise WhatIfInputError(
            field, f"selects no device in the inventory ({named}): check the driver, pool and device names"
        )
    return impact.to_json()


def _sharded_scans(data: dict[str, Any], ctx: Context) -> Scans | None:
    """The node scans split across Celery workers, when runs go to Celery on Redis and the cluster is
    large and splits exactly (`allocation.whatif.shards`); else None (one scan, here)."""
    queue = shard_queue()
    if (
        queue is None
        or len(ctx.snapshot.nodes) < settings.DRADASH_WHATIF_SHARD_MIN_NODES
        or not shardable(ctx.snapshot)
    ):
        return None
    return lambda scan_here: run_sharded(
        kind=KIND_NAME,
        data={**data, "now": ctx.now.isoformat()},
        snapshot=ctx.snapshot,
        shards=settings.DRADASH_WHATIF_SHARDS,
        queue=queue,
        compute=scan_here,
        budget=ctx.budget,
        progress=ctx.progress,
        phase="re-allocating evicted pods' claims, shard by shard",
    )


def _shard(data: dict[str, Any], nodes: list[str], snapshot: Snapshot, budget: Budget) -> dict[str, Any]:
    """One shard of a sharded taint impact, in a Celery worker (the `allocation.whatif_shard` task)."""
    return taint_impact_scan(
        snapshot=snapshot,
        selectors=data["selectors"],
        taint=data["taint"],
        now=datetime.fromisoformat(data["now"]),
        nodes=nodes,
        budget=budget,
    )


def _form_input(post: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "selector": {k: str(post.get(k, "")).strip() for k in ("driver", "pool", "device")},
        "taint": {
            "key": str(post.get("key", "")).strip(),
            "value": str(post.get("value", "")).strip(),
            "effect": post.get("effect", ""),
        },
    }


KIND_NAME = "taint_impact"
SHARD_KINDS[KIND_NAME] = _shard
KIND = register(
    WhatIfKind(
        name=KIND_NAME,
        label="Taint impact",
        template="allocation/kinds/taint_impact.html",
        normalize=_normalize,
        answer=_answer,
        form_input=_form_input,
        input_help="{selector: {driver, pool, device}} or {selectors: [...]}, taint: {key, value, effect}",
        order=30,
    )
)
