"""Nodes with their device counts, and their devices grouped by NUMA node."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from django.db.models import Count, Q

from inventory.models import FREE, Device, KubeObject
from inventory.selectors.common import NODES


@dataclass
class NodeSummary:
    name: str
    obj: KubeObject | None
    device_count: int
    allocated: int
    tainted: int


@dataclass
class NodeDetail:
    name: str
    obj: KubeObject | None
    # NUMA node (None = unknown) → devices on it, so GPUs and NICs that share a numaNode sit together.
    numa_groups: list[tuple[int | None, list[Device]]]
    pods: list[KubeObject]


class NodeList(Sequence[NodeSummary]):
    """Every node, summarised a page at a time: the names are two index scans, and device counts and Node
    objects are read only for the slice asked for (the API's pagination slices), so a page of 50 does not
    group 100,000 devices nor decode 10,000 Nodes."""

    def __init__(self, names: list[str]) -> None:
        self._names = names

    def __len__(self) -> int:
        return len(self._names)

    @overload
    def __getitem__(self, index: int) -> NodeSummary: ...

    @overload
    def __getitem__(self, index: slice) -> list[NodeSummary]: ...

    def __getitem__(self, index: int | slice) -> NodeSummary | list[NodeSummary]:
        if isinstance(index, slice):
            return node_summaries(names=self._names[index])
        return node_summaries(names=[self._names[index]])[0]

    def __iter__(self) -> Iterator[NodeSummary]:
        for start in range(0, len(self._names), 500):
            yield from node_summaries(names=self._names[start : start + 500])


def node_list() -> NodeList:
    return NodeList(node_names())


def node_summaries(*, names: list[str]) -> list[NodeSummary]:
    """These nodes (in this order) with their device counts."""
    nodes = {o.name: o for o in KubeObject.objects.filter(kind=NODES, name__in=names)}
    counts = {
        row["node_name"]: row
        for row in Device.objects.filter(node_name__in=names)
        .values("node_name")
        .annotate(
            total=Count("id"),
            allocated=Count("id", filter=~Q(allocation_state=FREE)),
            tainted=Count("id", filter=Q(tainted=True)),
        )
        .order_by()
    }
    return [
        NodeSummary(
            name=n,
            obj=nodes.get(n),
            device_count=counts.get(n, {}).get("total", 0),
            allocated=counts.get(n, {}).get("allocated", 0),
            tainted=counts.get(n, {}).get("tainted", 0),
        )
        for n in names
    ]


def node_detail(*, name: str) -> NodeDetail:
    obj = KubeObject.objects.filter(kind="nodes", name=name).first()
    devices = list(Device.objects.filter(node_name=name).order_by("driver", "name"))
    if obj is None and not devices:
        raise KubeObject.DoesNotExist(f"node {name!r} is not in the mirror")
    groups: dict[int | None, list[Device]] = defaultdict(list)
    for device in devices:
        groups[device.numa_node].append(device)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] if kv[0] is not None else 0))
    pods = list(KubeObject.objects.filter(kind="pods", index_key=name).order_by("namespace", "name"))
    return NodeDetail(name=name, obj=obj, numa_groups=ordered, pods=pods)


@dataclass
class NodeLayout:
    name: str
    numa: list[tuple[str, list[Device]]]  # (NUMA label, devices), "no NUMA node" last
    device_count: int
    labels: dict[str, str]
    uid: str = ""


def node_layouts(*, names: list[str]) -> list[NodeLayout]:
    """Devices per node grouped by their numaNode attribute: which GPUs and NICs share a NUMA node."""
    by_node: dict[str, dict[int | None, list[Device]]] = {n: defaultdict(list) for n in names}
    fields = (
        "id",
        "driver",
        "pool",
        "name",
        "node_name",
        "numa_node",
        "classes",
        "allocation_state",
        "max_taint_effect",
        "claim_namespace",
        "claim_name",
        "attributes_flat",
    )
    for device in Device.objects.filter(node_name__in=names).only(*fields).order_by("driver", "name"):
        by_node[device.node_name][device.numa_node].append(device)
    node_objs = {
        o.name: o for o in KubeObject.objects.filter(kind=NODES, name__in=names).only("name", "uid", "raw")
    }
    labels = {name: ((o.raw.get("metadata") or {}).get("labels") or {}) for name, o in node_objs.items()}
    out = []
    for name in names:
        groups = by_node[name]
        numa = [(f"NUMA {k}", groups[k]) for k in sorted(k for k in groups if k is not None)]
        if None in groups:
            numa.append(("no NUMA node", groups[None]))
        out.append(
            NodeLayout(
                name=name,
                numa=numa,
                device_count=sum(len(v) for v in groups.values()),
                labels=labels.get(name, {}),
                uid=node_objs[name].uid if name in node_objs else "",
            )
        )
    return out


def node_names(*, q: str = "") -> list[str]:
    """Every node that is a Node object or has devices, sorted."""
    nodes = set(KubeObject.objects.filter(kind=NODES).values_list("name", flat=True))
    # order_by(): Meta.ordering would join the DISTINCT and make it one row per device, not per node.
    nodes |= set(
        Device.objects.exclude(node_name="").order_by().values_list("node_name", flat=True).distinct()
    )
    return sorted(n for n in nodes if q.lower() in n.lower())
