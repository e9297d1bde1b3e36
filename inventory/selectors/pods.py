"""Pods: the list (the mirror's Pod rows, filtered and counted), and one pod: its node, owner,
ResourceClaims, the devices they hold and how the pod stands with each device's effective taints —
"which pod is on which GPU", answered from the pod.

A pod's claims are its `spec.resourceClaims` (a claim by name, or one made from a template whose name
the kubelet reads from `status.resourceClaimStatuses`) and the scheduler's extended-resource claim
(`status.extendedResourceClaimStatus`), as `dra.pods.pod_claims` reads them. Each allocated device is
checked against the tolerations its allocation result carries (the request's, copied by the scheduler)
with `dra.taints`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q

from dra.pods import POD_PHASES, PodWaiting, pod_claims, pod_phase, pod_waiting
from dra.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    effective_effect,
    parse_taint,
    parse_toleration,
    toleration_text,
)
from inventory.models import Claim, Device, KubeObject, Pod
from inventory.selectors.common import CLAIMS, JSON, PODS, clip


@dataclass
class DeviceTaintView:
    key: str
    value: str
    effect: str
    source: str  # "slice" (the driver) or "rule"
    rule: str
    #: the toleration that tolerates it, as text ("key=value:NoExecute"), "" when none does
    tolerated_by: str
    #: what it means for this pod: "tolerated", "evicts" (NoExecute untolerated), "no new allocations"
    #: (NoSchedule untolerated: the pod keeps the device), "informational" (None)
    consequence: str


@dataclass
class PodDevice:
    driver: str
    pool: str
    name: str
    request: str
    device: Device | None  # None: the allocation names a device the mirror does not have (any more)
    taints: list[DeviceTaintView] = field(default_factory=list)


@dataclass
class PodClaim:
    #: the pod's name for it (spec.resourceClaims[].name); "" for the extended-resource claim
    pod_claim: str
    #: the ResourceClaim's name in the pod's namespace; "" when it does not exist yet
    name: str
    source: str  # "claim" | "template" | "extended"
    template: str = ""
    claim: Claim | None = None
    obj: KubeObject | None = None
    devices: list[PodDevice] = field(default_factory=list)
    #: why it is not shown with devices ("not created yet", "not in the mirror", "not allocated")
    problem: str = ""


@dataclass
class PodDetail:
    obj: KubeObject
    phase: str
    node: str
    created: str
    owner: JSON | None  # {kind, name} of the controller
    claims: list[PodClaim]
    node_exists: bool
    #: why it waits (`dra.pods.pod_waiting`), None when nothing holds it
    waiting: PodWaiting | None = None

    @property
    def has_devices(self) -> bool:
        return any(c.devices for c in self.claims)

    @property
    def tolerated(self) -> list[tuple[PodDevice, DeviceTaintView]]:
        return [(d, t) for c in self.claims for d in c.devices for t in d.taints if t.tolerated_by]

    @property
    def untolerated(self) -> list[tuple[PodDevice, DeviceTaintView]]:
        return [(d, t) for c in self.claims for d in c.devices for t in d.taints if not t.tolerated_by]


def _toleration_text(raw: JSON) -> str:
    return clip(toleration_text(raw), 400)


def _taint_views(device: Device, tolerations: list[JSON]) -> list[DeviceTaintView]:
    views = []
    for row in device.taints or []:
        taint = parse_taint(row, source=row.get("source") or "slice", rule=row.get("rule") or None)
        by = next((t for t in tolerations if parse_toleration(t).tolerates(taint)), None)
        effect = effective_effect(taint.effect)
        if by is not None:
            consequence = "tolerated"
        elif effect == NO_EXECUTE:
            consequence = "evicts"
        elif effect == NO_SCHEDULE:
            consequence = "no new allocations"
        else:
            consequence = "informational"
        views.append(
            DeviceTaintView(
                key=clip(taint.key, 317),
                value=clip(taint.value, 63),
                effect=clip(taint.effect, 32),
                source=taint.source,
                rule=clip(taint.rule or "", 253),
                tolerated_by=_toleration_text(by) if by is not None else "",
                consequence=consequence,
            )
        )
    return views


def _request_tolerations(claim_raw: JSON) -> dict[str, list[JSON]]:
    """Request ("req" or "req/sub") → its tolerations, for results that do not carry them."""
    out: dict[str, list[JSON]] = {}
    for r in ((claim_raw.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = str(r.get("name", ""))
        if r.get("exactly"):
            out[name] = list(r["exactly"].get("tolerations") or [])
        for sub in r.get("firstAvailable") or []:
            out[f"{name}/{sub.get('name')}"] = list(sub.get("tolerations") or [])
    return out


def _claim_devices(obj: KubeObject) -> list[PodDevice]:
    allocation = (obj.raw.get("status") or {}).get("allocation") or {}
    results = list((allocation.get("devices") or {}).get("results") or [])
    if not results:
        return []
    requested = _request_tolerations(obj.raw)
    keys = {(str(r.get("driver")), str(r.get("pool")), str(r.get("device"))) for r in results}
    rows: dict[tuple[str, str, str], Device] = {}
    for driver, pool in {(d, p) for d, p, _ in keys}:
        names = [n for d, p, n in keys if (d, p) == (driver, pool)]
        for device in Device.objects.filter(driver=driver, pool=pool, name__in=names):
            rows[(driver, pool, device.name)] = device
    out = []
    for r in results:
        key = (str(r.get("driver")), str(r.get("pool")), str(r.get("device")))
        request = str(r.get("request", ""))
        tolerations = r.get("tolerations")
        if tolerations is None:
            tolerations = requested.get(request, [])
        device = rows.get(key)
        out.append(
            PodDevice(
                driver=key[0],
                pool=key[1],
                name=key[2],
                request=request,
                device=device,
                taints=_taint_views(device, list(tolerations)) if device is not None else [],
            )
        )
    return out


def _owner(raw: JSON) -> JSON | None:
    for ref in (raw.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return {"kind": clip(ref.get("kind"), 63), "name": clip(ref.get("name"), 253)}
    return None


def pod_detail(*, namespace: str, name: str) -> PodDetail:
    """The pod and its claims; raises KubeObject.DoesNotExist when the mirror has no such pod."""
    obj = KubeObject.objects.get(kind=PODS, namespace=namespace, name=name)
    raw: dict[str, Any] = obj.raw
    spec = raw.get("spec") or {}
    claims = [
        PodClaim(pod_claim=r.pod_claim, name=r.name, source=r.source, template=r.template)
        for r in pod_claims(raw)
    ]
    names = [c.name for c in claims if c.name]
    objects = {o.name: o for o in KubeObject.objects.filter(kind=CLAIMS, namespace=namespace, name__in=names)}
    rows = {c.name: c for c in Claim.objects.filter(namespace=namespace, name__in=names)}
    for claim in claims:
        if not claim.name:
            claim.problem = "not created yet (the pod's status names no claim for it)"
            continue
        claim.obj, claim.claim = objects.get(claim.name), rows.get(claim.name)
        if claim.obj is None:
            claim.problem = "not in the mirror"
            continue
        claim.devices = _claim_devices(claim.obj)
        if not claim.devices:
            claim.problem = "not allocated"
    node = str(spec.get("nodeName") or "")
    return PodDetail(
        obj=obj,
        phase=clip(pod_phase(raw), 32),
        node=node,
        created=obj.creation_timestamp,
        owner=_owner(raw),
        claims=claims,
        node_exists=bool(node) and KubeObject.objects.filter(kind="nodes", name=node).exists(),
        waiting=pod_waiting(raw),
    )


def pods_on_node(*, node: str) -> list[KubeObject]:
    """The pods bound to a node (spec.nodeName is the pods' index_key: one indexed query)."""
    return list(
        KubeObject.objects.filter(kind=PODS, index_key=node)
        .only("namespace", "name", "uid", "raw")
        .order_by("namespace", "name")
    )


@dataclass(frozen=True)
class PodCounts:
    total: int
    #: phase → pods in it (every phase of dra.pods.POD_PHASES, zeros included)
    phases: dict[str, int]
    #: pods that use a ResourceClaim
    with_claims: int
    #: pods that say why they wait (Pod.waiting_reason)
    waiting: int


def pod_counts() -> PodCounts:
    """How many pods there are, per phase, how many use a ResourceClaim and how many wait (two aggregates)."""
    phases = dict.fromkeys(POD_PHASES, 0)
    for phase, n in Pod.objects.order_by().values_list("phase").annotate(n=Count("id")):
        phases[phase if phase in phases else "Unknown"] += n
    counts = Pod.objects.aggregate(
        with_claims=Count("id", filter=Q(claim_count__gt=0)),
        waiting=Count("id", filter=~Q(waiting_reason="")),
    )
    return PodCounts(
        total=sum(phases.values()),
        phases=phases,
        with_claims=counts["with_claims"],
        waiting=counts["waiting"],
    )


def mark_claims_in_mirror(pods: Iterable[Pod]) -> None:
    """Set `in_mirror` on each named claim of these pods (their `claims` rows): whether the mirror holds that
    ResourceClaim, so a page links only to claims that have a page (a pod may name one that does not exist
    yet, or any more). One query for the pods of a page."""
    rows = [(pod.namespace, ref) for pod in pods for ref in (pod.claims or []) if ref.get("name")]
    names: dict[str, set[str]] = {}
    for namespace, ref in rows:
        names.setdefault(namespace, set()).add(str(ref["name"]))
    found: set[tuple[str, str]] = set()
    if names:
        q = Q()
        for namespace, wanted in names.items():
            q |= Q(namespace=namespace, name__in=sorted(wanted))
        found = set(Claim.objects.filter(q).values_list("namespace", "name"))
    for namespace, ref in rows:
        ref["in_mirror"] = (namespace, str(ref["name"])) in found


#: at most this many namespaces are offered as the namespace filter's suggestions
NAMESPACES_SUGGESTED = 200


def pod_namespaces() -> list[str]:
    """The namespaces that have pods, for the filter's suggestions (an indexed DISTINCT, bounded)."""
    rows = Pod.objects.order_by("namespace").values_list("namespace", flat=True).distinct()
    return list(rows[:NAMESPACES_SUGGESTED])
