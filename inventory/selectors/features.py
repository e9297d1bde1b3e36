"""Reads for the 1.37 betas and alphas on the claim, device, pod and node views (issue 13, item 4).

* node allocatable (DRANodeAllocatableResources, alpha): what DRA devices cost a node in cpu, memory …
  (`dra.node_allocatable`), beside its allocatable and the pods' ordinary container requests;
* device attributes downward API (KEP-5304, beta, no gate): per allocated device, the metadata file the
  kubelet mounts into the container and the attributes the driver published for the device;
* workload claims (DRAWorkloadResourceClaims, beta): a claim reserved for a PodGroup
  (scheduling.k8s.io/v1beta1 in 1.37) and the pods of that group (`spec.schedulingGroup.podGroupName`);
* compatibility groups (DRADeviceCompatibilityGroups, alpha) and optional node operations
  (DRAOptionalNodeOperations, alpha) as the slice declares them.

Everything here reads mirrored rows; strings from the cluster are left to the templates to escape.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dra.node_allocatable import NodeAllocatableError, claim_statuses, dra_requests
from dra.objects import LIST_ATTRIBUTE_TYPES
from dra.quantity import Quantity, QuantityError
from inventory.models import Device, KubeObject
from inventory.redaction import redact_device_status
from inventory.selectors.common import JSON

#: where the kubelet writes a device's metadata for the container (KEP-5304)
METADATA_PATH = (
    "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/{claim}/{request}/{driver}-metadata.json"
)
PODGROUPS = "podgroups"
SHOWN_RESOURCES = ("cpu", "memory")


def _q(value: Any) -> Quantity | None:
    try:
        return Quantity.parse(str(value).strip())
    except QuantityError:
        return None


# --------------------------------------------------------------------------- node allocatable


@dataclass
class AllocatableRow:
    resource: str
    allocatable: str
    #: DRA devices' cost on this node (mappings and overheads of the bound pods' claims)
    dra: str
    #: the bound pods' ordinary container requests
    requests: str
    left: str
    over: bool


@dataclass
class PodCost:
    namespace: str
    name: str
    #: resource → quantity the pod's DRA devices cost
    amounts: dict[str, str]
    #: "status" (the scheduler wrote it) or "computed" (dradash, from the claims and slices)
    source: str
    claims: list[JSON] = field(default_factory=list)


@dataclass
class NodeAllocatable:
    node: str
    found: bool
    rows: list[AllocatableRow] = field(default_factory=list)
    pods: list[PodCost] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def uses_dra(self) -> bool:
        return bool(self.pods)


def _container_requests(pod: Mapping[str, Any]) -> dict[str, Quantity]:
    """The pod's ordinary requests as the scheduler counts them: containers and sidecars summed, or the
    largest plain init container; pod-level resources (spec.resources) win when set."""
    spec = pod.get("spec") or {}
    pod_level = (spec.get("resources") or {}).get("requests") or {}
    if pod_level:
        return {r: q for r, v in pod_level.items() if (q := _q(v)) is not None}
    steady: dict[str, Quantity] = {}
    peak: dict[str, Quantity] = {}
    parts = [(c, c.get("restartPolicy") == "Always") for c in spec.get("initContainers") or ()]
    parts += [(c, True) for c in spec.get("containers") or ()]
    for container, long_lived in parts:
        for resource, value in ((container.get("resources") or {}).get("requests") or {}).items():
            q = _q(value)
            if q is None:
                continue
            if long_lived:
                steady[resource] = steady[resource] + q if resource in steady else q
            elif resource not in peak or peak[resource] < q:
                peak[resource] = q
    out = dict(steady)
    for resource, q in peak.items():
        if resource not in out or out[resource] < q:
            out[resource] = q
    return out


def _pod_statuses(
    pod: Mapping[str, Any], claims: Iterable[Mapping[str, Any]], slices: Iterable[Mapping[str, Any]]
) -> tuple[list[JSON], str]:
    written = (pod.get("status") or {}).get("nodeAllocatableResourceClaimStatuses")
    if written:
        return list(written), "status"
    return claim_statuses(pod=pod, claims=claims, slices=slices), "computed"


def _raw(kind: str, **filters: Any) -> list[JSON]:
    return [dict(r) for r in KubeObject.objects.filter(kind=kind, **filters).values_list("raw", flat=True)]


def _add(into: dict[str, Quantity], resource: str, q: Quantity) -> None:
    into[resource] = into[resource] + q if resource in into else q


def node_allocatable(*, node: str) -> NodeAllocatable:
    """DRA-managed cpu and memory (and any other resource a device maps) of `node`, against its
    allocatable. For h-find's Node page: `inventory/partials/node_allocatable.html` with `na` = this."""
    node_obj = KubeObject.objects.filter(kind="nodes", name=node).values_list("raw", flat=True).first()
    out = NodeAllocatable(node=node, found=node_obj is not None)
    allocatable = ((node_obj or {}).get("status") or {}).get("allocatable") or {}
    pods = [
        p
        for p in _raw("pods")
        if (p.get("spec") or {}).get("nodeName") == node
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    ]
    namespaces = {str((p.get("metadata") or {}).get("namespace", "")) for p in pods}
    claims = [c for ns in sorted(namespaces) for c in _raw("resourceclaims", namespace=ns)]
    slices = _raw("resourceslices")
    dra: dict[str, Quantity] = {}
    requests: dict[str, Quantity] = {}
    for pod in pods:
        for resource, q in _container_requests(pod).items():
            _add(requests, resource, q)
        try:
            statuses, source = _pod_statuses(pod, claims, slices)
            amounts = dra_requests(pod=pod, statuses=statuses)
        except (NodeAllocatableError, KeyError, TypeError) as exc:
            out.errors.append(f"pod {(pod.get('metadata') or {}).get('name')}: {exc}")
            continue
        for resource, q in amounts.items():
            _add(dra, resource, q)
        if amounts:
            m = pod.get("metadata") or {}
            out.pods.append(
                PodCost(
                    namespace=str(m.get("namespace", "")),
                    name=str(m.get("name", "")),
                    amounts={r: str(q) for r, q in sorted(amounts.items())},
                    source=source,
                    claims=statuses,
                )
            )
    resources = [r for r in SHOWN_RESOURCES if r in allocatable or r in dra] + sorted(
        r for r in dra if r not in SHOWN_RESOURCES
    )
    for resource in resources:
        total = _q(allocatable.get(resource, "0")) or Quantity(0)
        used_dra = dra.get(resource, Quantity(0))
        used_req = requests.get(resource, Quantity(0))
        left = total - used_dra - used_req
        out.rows.append(
            AllocatableRow(
                resource=resource,
                allocatable=str(allocatable.get(resource, "—")),
                dra=str(used_dra),
                requests=str(used_req),
                left=str(left),
                over=left.sign() < 0,
            )
        )
    return out


def claim_node_costs(*, claim: KubeObject, pods: Iterable[KubeObject]) -> list[JSON]:
    """What this claim's devices cost each pod it is reserved for (node allocatable, per resource)."""
    slices = _raw("resourceslices")
    out: list[JSON] = []
    for pod in pods:
        raw = pod.raw or {}
        try:
            statuses = [
                s
                for s in claim_statuses(pod=raw, claims=[claim.raw], slices=slices)
                if s.get("resourceClaimName") == claim.name
            ]
        except NodeAllocatableError as exc:
            out.append(
                {"pod": pod.name, "node": (raw.get("spec") or {}).get("nodeName", ""), "error": str(exc)}
            )
            continue
        for s in statuses:
            out.append(
                {
                    "pod": pod.name,
                    "node": (raw.get("spec") or {}).get("nodeName", ""),
                    "containers": s.get("containers") or [],
                    "mapping": s.get("mapping") or [],
                    "overhead": s.get("overhead") or [],
                }
            )
    return out


# --------------------------------------------------------------------------- device metadata


def attribute_view(attr: Mapping[str, Any]) -> JSON:
    """{"type", "value"} with list-typed attributes as a Python list ("list": True)."""
    if isinstance(attr, Mapping) and len(attr) == 1:
        ((kind, value),) = attr.items()
        return {"type": kind, "value": value, "list": kind in LIST_ATTRIBUTE_TYPES}
    return {"type": "", "value": attr, "list": False}


def device_metadata(*, claim: KubeObject, reveal: bool = False) -> list[JSON]:
    """Per allocation result of the claim: the metadata file the container reads (device attributes
    downward API) and what the driver published about the device (its attributes, and the claim's
    device status: networkData, data — its credential-named fields redacted unless `reveal`, for admins)."""
    status = (claim.raw or {}).get("status") or {}
    results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
    by_status = {
        (d.get("driver"), d.get("pool"), d.get("device")): d
        for d in status.get("devices") or ()
        if isinstance(d, dict)
    }
    rows = {
        (d.driver, d.pool, d.name): d
        for d in Device.objects.filter(
            driver__in={r.get("driver") for r in results}, name__in={r.get("device") for r in results}
        )
    }
    out: list[JSON] = []
    for r in results:
        key = (r.get("driver"), r.get("pool"), r.get("device"))
        request = str(r.get("request", "")).split("/")[0]
        device = rows.get(key)
        entry = by_status.get(key) or {}
        if not reveal:
            entry = redact_device_status(entry)
        out.append(
            {
                "request": r.get("request"),
                "driver": r.get("driver"),
                "pool": r.get("pool"),
                "device": r.get("device"),
                "path": METADATA_PATH.format(claim=claim.name, request=request, driver=r.get("driver")),
                "attributes": [
                    (name, attribute_view(attr))
                    for name, attr in sorted((device.attributes if device else {}).items())
                ],
                "networkData": entry.get("networkData") or None,
                "data": entry.get("data"),
                "known": device is not None,
            }
        )
    return out


def pod_device_metadata(*, namespace: str, name: str, reveal: bool = False) -> list[JSON]:
    """The downward API metadata of every device allocated to the pod's claims. For h-find's Pod page:
    `inventory/partials/pod_device_metadata.html` with `pod_devices` = this."""
    pod = KubeObject.objects.filter(kind="pods", namespace=namespace, name=name).first()
    if pod is None:
        return []
    raw = pod.raw or {}
    generated = {
        s.get("name"): s.get("resourceClaimName")
        for s in (raw.get("status") or {}).get("resourceClaimStatuses") or ()
    }
    names = []
    for entry in (raw.get("spec") or {}).get("resourceClaims") or ():
        claim_name = entry.get("resourceClaimName") or generated.get(entry.get("name"))
        if claim_name:
            names.append((str(entry.get("name")), str(claim_name)))
    extended = ((raw.get("status") or {}).get("extendedResourceClaimStatus") or {}).get("resourceClaimName")
    if extended:
        names.append(("extended resources", str(extended)))
    claims = {
        c.name: c
        for c in KubeObject.objects.filter(
            kind="resourceclaims", namespace=namespace, name__in=[n for _, n in names]
        )
    }
    return [
        {
            "entry": entry,
            "namespace": namespace,
            "claim": claim_name,
            "devices": device_metadata(claim=claims[claim_name], reveal=reveal),
        }
        for entry, claim_name in names
        if claim_name in claims
    ]


# --------------------------------------------------------------------------- workload claims


def workload_groups(*, claim: KubeObject) -> list[JSON]:
    """The PodGroups the claim is reserved for (DRAWorkloadResourceClaims) and the pods of each group."""
    reserved = ((claim.raw or {}).get("status") or {}).get("reservedFor") or ()
    groups = [r for r in reserved if r.get("resource") == PODGROUPS]
    if not groups:
        return []
    members: dict[str, list[KubeObject]] = defaultdict(list)
    for pod in KubeObject.objects.filter(kind="pods", namespace=claim.namespace).order_by("name"):
        group = ((pod.raw or {}).get("spec") or {}).get("schedulingGroup") or {}
        if group.get("podGroupName"):
            members[str(group["podGroupName"])].append(pod)
    return [
        {
            "apiGroup": g.get("apiGroup", ""),
            "name": g.get("name", ""),
            "uid": g.get("uid", ""),
            "pods": [
                {
                    "name": p.name,
                    "uid": p.uid,
                    "phase": ((p.raw or {}).get("status") or {}).get("phase", ""),
                    "node": ((p.raw or {}).get("spec") or {}).get("nodeName", ""),
                }
                for p in members.get(str(g.get("name")), [])
            ],
        }
        for g in groups
    ]


# --------------------------------------------------------------------------- slice-declared alphas


def skip_node_operations(*, device: Device) -> list[str]:
    """`spec.skipNodeOperations` of the device's slice (DRAOptionalNodeOperations)."""
    raw = (
        KubeObject.objects.filter(kind="resourceslices", uid=device.slice_uid)
        .values_list("raw", flat=True)
        .first()
    )
    return [str(op) for op in ((raw or {}).get("spec") or {}).get("skipNodeOperations") or ()]


def compatibility_groups(consumes_counters: Iterable[Mapping[str, Any]]) -> list[tuple[str, list[str]]]:
    """(counter set, compatibility groups) for each counter set a device consumes that names groups."""
    return [
        (str(c.get("counterSet", "")), [str(g) for g in c.get("compatibilityGroups") or ()])
        for c in consumes_counters
        if c.get("compatibilityGroups")
    ]


def pool_compatibility(*, driver: str, pool: str) -> list[JSON]:
    """The pool's devices grouped by counter set, then by compatibility group: which partitions may be
    allocated together (only devices sharing a group on a counter set; none with no groups)."""
    out: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, consumes in (
        Device.objects.filter(driver=driver, pool=pool)
        .order_by("name")
        .values_list("name", "consumes_counters")
    ):
        for c in consumes or ():
            groups = c.get("compatibilityGroups") or ["(no group)"]
            for g in groups:
                out[str(c.get("counterSet", ""))][str(g)].append(str(name))
    return [
        {"counterSet": cs, "groups": [{"name": g, "devices": d} for g, d in sorted(groups.items())]}
        for cs, groups in sorted(out.items())
        if any(g != "(no group)" for g in groups)
    ]


def class_compatibility(*, device_class: str) -> list[JSON]:
    """Per pool with compatibility groups, the class's devices by group (the class view)."""
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for driver, pool, consumes in Device.objects.filter(
        class_index__contains=f" {device_class} "
    ).values_list("driver", "pool", "consumes_counters"):
        for c in consumes or ():
            for g in c.get("compatibilityGroups") or ():
                out[(driver, pool)][str(g)] += 1
    return [
        {"driver": d, "pool": p, "groups": dict(sorted(groups.items()))}
        for (d, p), groups in sorted(out.items())
    ]


# --------------------------------------------------------------------------- views' bundles


def capacity_view(*, device: Device) -> list[JSON]:
    """Per capacity of the device: value, its request policy (DRAConsumableCapacity; a validRange with a
    fractional min, max or step is DRAFractionalCapacityRange), what the allocations consumed, what is left."""
    consumed: dict[str, Quantity] = {}
    for a in device.allocations or ():
        for name, value in (a.get("consumedCapacity") or {}).items():
            q = _q(value)
            if q is not None:
                _add(consumed, str(name), q)
    out: list[JSON] = []
    for name, cap in sorted((device.capacity or {}).items()):
        cap = cap if isinstance(cap, dict) else {"value": cap}
        policy = cap.get("requestPolicy") or {}
        valid = policy.get("validRange") or {}
        bounds = [_q(valid.get(k)) for k in ("min", "max", "step") if valid.get(k) is not None]
        total = _q(cap.get("value"))
        used = consumed.get(name)
        out.append(
            {
                "name": name,
                "value": cap.get("value"),
                "default": policy.get("default"),
                "range": valid or None,
                "values": policy.get("validValues") or [],
                "fractional": any(b is not None and not b.is_integer() for b in bounds),
                "consumed": str(used) if used is not None else "",
                "left": str(total - used) if total is not None and used is not None else "",
            }
        )
    return out


def device_features(*, device: Device) -> JSON:
    return {
        "skip_node_operations": skip_node_operations(device=device),
        "compatibility_groups": compatibility_groups(device.consumes_counters or ()),
        "pool_compatibility": pool_compatibility(driver=device.driver, pool=device.pool),
        "capacity": capacity_view(device=device),
        "list_attributes": [
            (name, attribute_view(attr)["value"])
            for name, attr in sorted((device.attributes or {}).items())
            if attribute_view(attr)["list"]
        ],
    }


def claim_features(*, claim: KubeObject, pods: Iterable[KubeObject], reveal: bool = False) -> JSON:
    pods = list(pods)
    results = (((claim.raw or {}).get("status") or {}).get("allocation") or {}).get("devices") or {}
    return {
        "metadata": device_metadata(claim=claim, reveal=reveal),
        "groups": workload_groups(claim=claim),
        "node_costs": claim_node_costs(claim=claim, pods=pods),
        "skip_node_operations": [
            {
                "request": r.get("request"),
                "device": f"{r.get('driver')}/{r.get('pool')}/{r.get('device')}",
                "ops": r["skipNodeOperations"],
            }
            for r in results.get("results") or ()
            if r.get("skipNodeOperations")
        ],
    }


def compatibility_by_class() -> dict[str, list[JSON]]:
    """Per DeviceClass, per pool, devices counted by compatibility group (the classes view); one query over
    the devices that consume counters."""
    out: dict[str, dict[tuple[str, str], dict[str, int]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(int))
    )
    rows = Device.objects.filter(partitionable=True).values_list(
        "driver", "pool", "classes", "consumes_counters"
    )
    for driver, pool, classes, consumes in rows:
        groups = {str(g) for c in consumes or () for g in c.get("compatibilityGroups") or ()}
        for cls in classes or ():
            for g in groups:
                out[str(cls)][(driver, pool)][g] += 1
    return {
        cls: [
            {"driver": d, "pool": p, "groups": dict(sorted(g.items()))} for (d, p), g in sorted(pools.items())
        ]
        for cls, pools in sorted(out.items())
    }
