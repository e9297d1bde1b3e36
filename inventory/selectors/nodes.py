"""Nodes with their device counts, and their devices grouped by NUMA node."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from django.db.models import Count, Sum

from inventory.mirror.derive.common import json_path
from inventory.models import FREE, Device, KubeObject, NodeDeviceCount
from inventory.selectors.common import NODES, nanos


@dataclass
class NodeSummary:
    name: str
    obj: KubeObject | None
    device_count: int
    allocated: int
    tainted: int


@dataclass
class DeviceEntry:
    """A device and the partitions nested under it: devices that consume the counter set it uses up."""

    device: Device
    partitions: list[Device] = field(default_factory=list)
    counter_set: str = ""


@dataclass
class NumaGroup:
    numa: int | None  # None: the devices say no NUMA node
    entries: list[DeviceEntry]
    total: int = 0
    allocated: int = 0
    free: int = 0
    tainted: int = 0

    @property
    def label(self) -> str:
        return "unknown NUMA node" if self.numa is None else f"NUMA node {self.numa}"


@dataclass
class NodeDetail:
    name: str
    obj: KubeObject | None
    # NUMA node (None = unknown) → devices on it, so GPUs and NICs that share a numaNode sit together.
    numa_groups: list[tuple[int | None, list[Device]]]
    pods: list[KubeObject]
    # The same devices with partitions nested under their parent device, and counts per group.
    groups: list[NumaGroup] = field(default_factory=list)

    @property
    def labels(self) -> dict[str, str]:
        return dict(((self.obj.raw.get("metadata") or {}).get("labels") or {}) if self.obj else {})

    @property
    def allocatable(self) -> dict[str, str]:
        return dict(((self.obj.raw.get("status") or {}).get("allocatable") or {}) if self.obj else {})


class NodeList(Sequence[NodeSummary]):
    """Every node, summarised a page at a time: the names are paged in SQL (`NodeNames`), and device counts and Node
    objects are read only for the slice asked for (the API's pagination slices), so a page of 50 does not
    group 100,000 devices nor decode 10,000 Nodes."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = names

    def __len__(self) -> int:
        return len(self._names)

    @overload
    def __getitem__(self, index: int) -> NodeSummary: ...

    @overload
    def __getitem__(self, index: slice) -> list[NodeSummary]: ...

    def __getitem__(self, index: int | slice) -> NodeSummary | list[NodeSummary]:
        if isinstance(index, slice):
            return node_summaries(names=list(self._names[index]))
        return node_summaries(names=[self._names[index]])[0]

    def __iter__(self) -> Iterator[NodeSummary]:
        for start in range(0, len(self._names), 500):
            yield from node_summaries(names=list(self._names[start : start + 500]))


def node_list() -> NodeList:
    return NodeList(node_names())


def node_summaries(*, names: list[str]) -> list[NodeSummary]:
    """These nodes (in this order) with their device counts."""
    nodes = {o.name: o for o in KubeObject.objects.filter(kind=NODES, namespace="", name__in=names)}
    counts = {
        row["node_name"]: row
        for row in NodeDeviceCount.objects.filter(node_name__in=names)
        .values("node_name")
        .annotate(total=Sum("total"), allocated=Sum("allocated"), tainted=Sum("tainted"))
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
    obj = KubeObject.objects.filter(kind="nodes", namespace="", name=name).first()
    devices = list(Device.objects.filter(node_name=name).order_by("driver", "name"))
    if obj is None and not devices:
        raise KubeObject.DoesNotExist(f"node {name!r} is not in the mirror")
    groups: dict[int | None, list[Device]] = defaultdict(list)
    for device in devices:
        groups[device.numa_node].append(device)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] if kv[0] is not None else 0))
    pods = list(KubeObject.objects.filter(kind="pods", index_key=name).order_by("namespace", "name"))
    return NodeDetail(name=name, obj=obj, numa_groups=ordered, pods=pods, groups=numa_groups(devices))


def _consumed(device: Device) -> tuple[str, int]:
    """(the first counter set the device consumes from, the sum of what it consumes there in nanos)."""
    for entry in device.consumes_counters or []:
        if isinstance(entry, dict) and entry.get("counterSet"):
            counters = entry.get("counters") or {}
            total = sum(nanos((c or {}).get("value")) for c in counters.values() if isinstance(c, dict))
            return str(entry["counterSet"]), total
    return "", 0


def nest_partitions(devices: list[Device]) -> list[DeviceEntry]:
    """Devices with the partitions of one physical device nested under it.

    Partitions of a device are the devices that consume counters from the same counter set of the same
    pool (partitionable devices, KEP 4815); the parent is the one that consumes the most of it (a full
    GPU uses up its set). Sets where no device consumes strictly more than the others have no parent:
    their devices stay side by side.
    """
    by_set: dict[tuple[str, str, str], list[tuple[int, Device]]] = defaultdict(list)
    for device in devices:
        counter_set, total = _consumed(device)
        if counter_set:
            by_set[(device.driver, device.pool, counter_set)].append((total, device))
    parent_of: dict[int, int] = {}  # partition id → parent id
    parents: dict[int, str] = {}
    for (_driver, _pool, counter_set), members in by_set.items():
        if len(members) < 2:
            continue
        ranked = sorted(members, key=lambda m: -m[0])
        if ranked[0][0] <= ranked[1][0]:
            continue
        parent = ranked[0][1]
        parents[parent.pk] = counter_set
        for _total, device in ranked[1:]:
            parent_of[device.pk] = parent.pk
    entries: dict[int, DeviceEntry] = {}
    out: list[DeviceEntry] = []
    for device in devices:
        if device.pk in parent_of:
            continue
        entry = DeviceEntry(device=device, counter_set=parents.get(device.pk, ""))
        entries[device.pk] = entry
        out.append(entry)
    for device in devices:
        parent_pk = parent_of.get(device.pk)
        if parent_pk is not None:
            entries[parent_pk].partitions.append(device)
    return out


def numa_groups(devices: list[Device]) -> list[NumaGroup]:
    """Devices per NUMA node (unknown last) with counts; a partition sits with its parent device."""
    by_numa: dict[int | None, list[Device]] = defaultdict(list)
    entries = nest_partitions(devices)
    for entry in entries:
        by_numa[entry.device.numa_node].append(entry.device)
    out = []
    for numa in sorted(by_numa, key=lambda n: (n is None, n or 0)):
        members = [e for e in entries if e.device.numa_node == numa]
        flat = [d for e in members for d in (e.device, *e.partitions)]
        out.append(
            NumaGroup(
                numa=numa,
                entries=members,
                total=len(flat),
                allocated=sum(d.allocation_state != FREE for d in flat),
                free=sum(d.allocation_state == FREE for d in flat),
                tainted=sum(bool(d.tainted) for d in flat),
            )
        )
    return out


@dataclass
class DriverCounts:
    total: int = 0
    allocated: int = 0
    tainted: int = 0

    @property
    def free(self) -> int:
        return self.total - self.allocated


@dataclass
class NodeRow:
    name: str
    uid: str  # "" when only devices name the node
    drivers: dict[str, DriverCounts]  # driver → counts (every driver of the page, zeros included)
    pods: int
    ready: str  # the Ready condition's status, "" when unknown
    created: str = ""  # the Node's creationTimestamp, "" when only devices name the node

    @property
    def device_count(self) -> int:
        return sum(c.total for c in self.drivers.values())


def node_rows(*, names: list[str]) -> tuple[list[str], list[NodeRow]]:
    """One row per node of the page: devices allocated/free/tainted per driver (the maintained
    `NodeDeviceCount` rows) and pods bound to it, whatever the number of devices."""
    counts: dict[str, dict[str, DriverCounts]] = {n: {} for n in names}
    aggregate = NodeDeviceCount.objects.filter(node_name__in=names).values(
        "node_name", "driver", "total", "allocated", "tainted"
    )
    drivers: set[str] = set()
    for row in aggregate:
        drivers.add(row["driver"])
        counts[row["node_name"]][row["driver"]] = DriverCounts(row["total"], row["allocated"], row["tainted"])
    pods = dict(
        KubeObject.objects.filter(kind="pods", index_key__in=names)
        .values("index_key")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("index_key", "n")
    )
    objs = {
        o.name: o
        for o in KubeObject.objects.filter(kind=NODES, namespace="", name__in=names).only(
            "name", "uid", "raw", "creation_timestamp"
        )
    }
    order = sorted(drivers)
    rows = []
    for name in names:
        obj = objs.get(name)
        conditions = ((obj.raw.get("status") or {}).get("conditions") or []) if obj else []
        ready = next((str(c.get("status", "")) for c in conditions if c.get("type") == "Ready"), "")
        rows.append(
            NodeRow(
                name=name,
                uid=obj.uid if obj else "",
                drivers={d: counts[name].get(d, DriverCounts()) for d in order},
                pods=pods.get(name, 0),
                ready=ready,
                created=obj.creation_timestamp if obj else "",
            )
        )
    return order, rows


class NodeNames(Sequence[str]):
    """Every node that is a Node object or has devices, sorted, counted and sliced in SQL: a UNION of two
    index scans (the Node objects' names; the device counters' nodes, one row per node and driver), so a
    page of 50 reads 50 names, not 10,000 into Python."""

    def __init__(self, *, q: str = "", descending: bool = False) -> None:
        self._order = "-name" if descending else "name"
        objects = KubeObject.objects.filter(kind=NODES, namespace="")
        counted = NodeDeviceCount.objects.exclude(node_name="")
        if q:
            objects, counted = objects.filter(name__icontains=q), counted.filter(node_name__icontains=q)
        self._names = (
            objects.order_by()
            .values_list("name", flat=True)
            .union(counted.order_by().values_list("node_name", flat=True))
        )
        self._count: int | None = None

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._names.count()
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                raise ValueError("node names are sliced with step 1")
            return list(self._names.order_by(self._order)[start:stop]) if start < stop else []
        found = self[index : index + 1] if index >= 0 else []
        if not found:
            raise IndexError(index)
        return found[0]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names.order_by(self._order)))


#: the Nodes page's sort keys (?sort=KEY or ?sort=-KEY) besides one per driver (`driver:NAME`)
NODE_SORTS = ("name", "ready", "pods", "age")


def node_sort_valid(sort: str) -> bool:
    key = sort.removeprefix("-")
    return key in NODE_SORTS or (key.startswith("driver:") and len(key) > len("driver:"))


def node_names(*, q: str = "", sort: str = "") -> Sequence[str]:
    """Every node that is a Node object or has devices, by name (counted and paged in SQL) or by the column
    `sort` names (see `sorted_node_names`); an unknown sort is the default, by name."""
    if not node_sort_valid(sort) or sort.removeprefix("-") == "name":
        return NodeNames(q=q, descending=sort == "-name")
    return sorted_node_names(list(NodeNames(q=q)), sort=sort)


def sorted_node_names(names: list[str], *, sort: str) -> list[str]:
    """`names` in the order of a column of the Nodes page, then by name. Each key is one grouped query over
    columns (no Node object is decoded): ready (not ready first), pods bound, age (youngest first), a driver's
    devices (allocated, then all). Nodes that have no value for the key (no Node object, no device of the
    driver) come last either way."""
    key, descending = sort.removeprefix("-"), sort.startswith("-")
    nodes = KubeObject.objects.filter(kind=NODES, namespace="")
    values: dict[str, tuple[object, ...]]
    if key == "ready":
        ready = {"False": 0, "Unknown": 1, "True": 2}
        values = {}
        for name, conditions in nodes.values_list("name", json_path("raw", "status", "conditions")):
            status = next(
                (
                    str(c.get("status"))
                    for c in conditions or []
                    if isinstance(c, dict) and c.get("type") == "Ready"
                ),
                "",
            )
            values[name] = (ready.get(status, 1),)
    elif key == "age":
        # Ascending is youngest first, as on Claims: the newest creationTimestamp (RFC 3339 in UTC sorts as text).
        values = {n: (t,) for n, t in nodes.values_list("name", "creation_timestamp") if t}
    elif key == "pods":
        bound = (
            KubeObject.objects.filter(kind="pods")
            .exclude(index_key="")
            .values("index_key")
            .annotate(n=Count("id"))
            .order_by()
            .values_list("index_key", "n")
        )
        values = {name: (0,) for name in names} | {n: (count,) for n, count in bound}
    else:
        rows = NodeDeviceCount.objects.filter(driver=key.removeprefix("driver:"), total__gt=0)
        values = {n: (a, t) for n, a, t in rows.values_list("node_name", "allocated", "total")}
    present = sorted(n for n in names if n in values)
    # A stable sort: nodes with equal keys stay by name in either direction.
    present.sort(key=values.__getitem__, reverse=descending != (key == "age"))
    return present + sorted(n for n in names if n not in values)
