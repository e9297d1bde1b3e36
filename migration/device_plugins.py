"""Device plugin → DRA assistant (issue 13, item 1): per extended resource name in use, who asks for it,
who serves it where, and what stands in the way of serving it through DRA.

A read-only selector over the mirror. Every rule is `dra.extended`'s: which DeviceClass serves a name
(implicit `deviceclass.resource.kubernetes.io/<class>`, explicit `extendedResourceName`, newest wins, on a
tie the name that sorts first), which backend serves it on a node (a device plugin when the node
advertises it in `status.allocatable`, DRA when it advertises none and a class maps the name), and what a
pod asks for (`pod_extended_counts`, as NodeResourcesFit counts it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dra.extended import (
    IMPLICIT_PREFIX,
    device_plugin_capacity,
    extended_resources,
    is_extended_resource_name,
    pod_extended_counts,
)
from dra.taints import parse_time
from inventory.models import Device, KubeObject

JSON = dict[str, Any]

#: the Kueue / ResourceQuota note shown on the page and in the API
QUOTA_NOTE = (
    "Quota counts the extended resource name: Kueue (and a ResourceQuota on requests.<name>) charges a pod "
    "for example.com/gpu whichever backend serves it. While both backends run, make sure one device is "
    "counted once: a GPU published through DRA must not also be advertised by the node's device plugin "
    "(and in Kueue's ResourceFlavors), or quota and capacity count it twice."
)
BOTH_BACKENDS_NOTE = (
    "Not allowed: the node advertises the resource through a device plugin and publishes devices of the "
    "class that maps it through DRA. Upstream the device plugin wins on such a node (DRA does not serve the "
    "name there); remove the plugin, or stop publishing the devices, before relying on DRA."
)


@dataclass(frozen=True)
class PodUse:
    namespace: str
    name: str
    count: int
    node: str
    phase: str
    #: "device plugin", "DRA" (an extended-resource claim), "pending" or "unserved" (bound, neither)
    backend: str
    claim: str = ""

    @property
    def moves(self) -> bool:
        """Served by a device plugin now (or waiting for one): the pods a migration moves to DRA."""
        return self.backend in ("device plugin", "pending")


@dataclass(frozen=True)
class PluginNode:
    name: str
    allocatable: int
    used: int
    #: the node also has DRA devices of the mapping class (both backends: not allowed)
    dra_devices: int = 0


@dataclass(frozen=True)
class ClassClaim:
    device_class: str
    created: str
    wins: bool
    why: str


@dataclass
class ResourceReport:
    name: str
    #: the DeviceClass that serves the name through DRA, or ""
    device_class: str = ""
    #: "explicit" (extendedResourceName) or "implicit" (deviceclass.resource.kubernetes.io/<class>)
    mapping: str = ""
    contenders: list[ClassClaim] = field(default_factory=list)
    pods: list[PodUse] = field(default_factory=list)
    plugin_nodes: list[PluginNode] = field(default_factory=list)
    #: nodes with devices of the class that advertise none: DRA serves the name there, node → devices
    dra_nodes: dict[str, int] = field(default_factory=dict)
    #: devices of the class in pools no single node owns (network-attached)
    shared_devices: int = 0

    @property
    def both(self) -> list[PluginNode]:
        return [n for n in self.plugin_nodes if n.dra_devices]

    @property
    def conflict(self) -> bool:
        return len(self.contenders) > 1

    @property
    def moving(self) -> list[PodUse]:
        return [p for p in self.pods if p.moves]

    @property
    def requested(self) -> int:
        return sum(p.count for p in self.pods)


@dataclass
class Assistant:
    resources: list[ResourceReport]
    quota_note: str = QUOTA_NOTE
    both_note: str = BOTH_BACKENDS_NOTE
    notes: list[str] = field(default_factory=list)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _contenders(resource: str, classes: Iterable[Mapping[str, Any]], winner: str) -> list[ClassClaim]:
    mine = [c for c in classes if (c.get("spec") or {}).get("extendedResourceName") == resource]
    if len(mine) < 2:
        return [
            ClassClaim(str(_meta(c).get("name")), str(_meta(c).get("creationTimestamp", "")), True, "")
            for c in mine
        ]
    stamps = {str(_meta(c).get("name")): parse_time(_meta(c).get("creationTimestamp")) for c in mine}
    newest = stamps.get(winner)
    tied = sorted(n for n, t in stamps.items() if t == newest)
    out = []
    for c in sorted(mine, key=lambda c: str(_meta(c).get("name"))):
        name = str(_meta(c).get("name"))
        if name == winner:
            why = (
                f"created at the same time as {', '.join(t for t in tied if t != name)}; its name sorts first"
                if len(tied) > 1
                else "the newest creationTimestamp"
            )
        elif stamps[name] == newest:
            why = f"same creationTimestamp as {winner}, whose name sorts first"
        else:
            why = f"older than {winner}"
        out.append(ClassClaim(name, str(_meta(c).get("creationTimestamp", "")), name == winner, why))
    return out


def _pod_use(pod: Mapping[str, Any], resource: str, count: int, nodes: Mapping[str, JSON]) -> PodUse:
    m = _meta(pod)
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    node = str(spec.get("nodeName") or "")
    ext = status.get("extendedResourceClaimStatus") or {}
    mapped = any(r.get("resourceName") == resource for r in ext.get("requestMappings") or ())
    if mapped:
        backend, claim = "DRA", str(ext.get("resourceClaimName", ""))
    elif not node:
        backend, claim = "pending", ""
    elif node in nodes and device_plugin_capacity(nodes[node], resource) > 0:
        backend, claim = "device plugin", ""
    else:
        backend, claim = "unserved", ""
    return PodUse(
        namespace=str(m.get("namespace", "")),
        name=str(m.get("name", "")),
        count=count,
        node=node,
        phase=str(status.get("phase", "")),
        backend=backend,
        claim=claim,
    )


def _devices_per_node(device_class: str) -> tuple[dict[str, int], int]:
    per_node: dict[str, int] = defaultdict(int)
    shared = 0
    rows = Device.objects.filter(class_index__contains=f" {device_class} ").values_list(
        "node_name", flat=True
    )
    for node in rows:
        if node:
            per_node[node] += 1
        else:
            shared += 1
    return dict(per_node), shared


def assistant_report(
    *,
    classes: list[JSON],
    nodes: list[JSON],
    pods: list[JSON],
    devices_of_class: Any = _devices_per_node,
) -> Assistant:
    """The assistant's answer for these objects; `devices_of_class(cls) -> ({node: n}, shared)`."""
    ext = extended_resources(classes)
    by_node = {str(_meta(n).get("name")): n for n in nodes}
    names: set[str] = set()
    wanted: dict[str, list[tuple[JSON, int]]] = defaultdict(list)
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for resource, count in pod_extended_counts(pod).items():
            wanted[resource].append((pod, count))
            names.add(resource)
    for node in nodes:
        for resource in (node.get("status") or {}).get("allocatable") or {}:
            if is_extended_resource_name(str(resource)) and device_plugin_capacity(node, str(resource)) > 0:
                names.add(str(resource))
    names |= {r for r in ext.classes if not r.startswith(IMPLICIT_PREFIX)}
    reports: list[ResourceReport] = []
    for resource in sorted(names):
        report = ResourceReport(name=resource, device_class=ext.classes.get(resource, ""))
        if report.device_class:
            report.mapping = "implicit" if resource.startswith(IMPLICIT_PREFIX) else "explicit"
            report.contenders = _contenders(resource, classes, report.device_class)
            report.dra_nodes, report.shared_devices = devices_of_class(report.device_class)
        report.pods = sorted(
            (_pod_use(p, resource, count, by_node) for p, count in wanted.get(resource, [])),
            key=lambda u: (u.backend != "device plugin", u.backend != "pending", u.namespace, u.name),
        )
        used: dict[str, int] = defaultdict(int)
        for use in report.pods:
            if use.backend == "device plugin":
                used[use.node] += use.count
        for name in sorted(by_node):
            capacity = device_plugin_capacity(by_node[name], resource)
            if capacity > 0:
                report.plugin_nodes.append(
                    PluginNode(name, capacity, used.get(name, 0), report.dra_nodes.pop(name, 0))
                )
        reports.append(report)
    notes = list(ext.conflicts)
    return Assistant(resources=reports, notes=notes)


def _raw(kind: str) -> list[JSON]:
    return [dict(raw) for raw in KubeObject.objects.filter(kind=kind).values_list("raw", flat=True)]


def device_class_names() -> list[str]:
    return list(
        KubeObject.objects.filter(kind="deviceclasses").order_by("name").values_list("name", flat=True)
    )


def device_plugin_assistant() -> Assistant:
    """The assistant over the mirrored inventory."""
    return assistant_report(classes=_raw("deviceclasses"), nodes=_raw("nodes"), pods=_raw("pods"))


def assistant_json(assistant: Assistant) -> JSON:
    """The API form."""
    return {
        "quota_note": assistant.quota_note,
        "both_backends_note": assistant.both_note,
        "notes": assistant.notes,
        "resources": [
            {
                "name": r.name,
                "device_class": r.device_class or None,
                "mapping": r.mapping or None,
                "conflict": r.conflict,
                "contenders": [vars(c) for c in r.contenders],
                "requested": r.requested,
                "pods": [{**vars(p), "moves_to_dra": p.moves} for p in r.pods],
                "device_plugin_nodes": [vars(n) for n in r.plugin_nodes],
                "dra_nodes": [{"name": n, "devices": d} for n, d in sorted(r.dra_nodes.items())],
                "both_backends_nodes": [n.name for n in r.both],
                "shared_devices": r.shared_devices,
            }
            for r in assistant.resources
        ],
    }
