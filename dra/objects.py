"""What the API objects mean: a ResourceSlice as device rows, pools, claims, extended resources.

* pools (dra-api.md §7.2): only the highest ``generation`` of a pool counts; it is complete when as
  many slices as ``resourceSliceCount`` exist at that generation; it is invalid when a device name
  repeats, a counter set is declared twice, or a device consumes a counter set or counter that the
  pool does not declare (`pool_problem`, the one check the allocator and the inventory share).
* attributes: unqualified names belong to the driver's domain; `flat_attributes` spells every value
  as text under its qualified name (and the short name for the driver's own domain).
* slice size: 128 devices, 64 once a device uses taints, counters or list attributes (`device_limit`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]

NUMA_ATTRIBUTE = "resource.kubernetes.io/numaNode"
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
SCALAR_ATTRIBUTE_TYPES = ("int", "bool", "string", "version")
LIST_ATTRIBUTE_TYPES = ("ints", "bools", "strings", "versions")
#: devices per ResourceSlice, and the lower limit once one of them uses an advanced feature (dra-api.md §2)
MAX_DEVICES_PER_SLICE = 128
MAX_DEVICES_PER_SLICE_WITH_ADVANCED_FEATURES = 64


def device_id(driver: str, pool: str, device: str) -> str:
    return f"{driver}/{pool}/{device}"


# --------------------------------------------------------------------------------- attributes


def qualify(driver: str, name: str) -> str:
    """`model` of gpu.example.com is `gpu.example.com/model`; qualified names stay as they are."""
    return name if "/" in name else f"{driver}/{name}"


def attribute_value(attr: Mapping[str, Any]) -> Any:
    """The value of a DeviceAttribute (`{"int": 3}` → 3); None for an unknown or missing type."""
    for key in ("string", "int", "bool", "version", *LIST_ATTRIBUTE_TYPES):
        if key in attr:
            return attr[key]
    return None


def attribute_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(attribute_text(v) for v in value)
    return "" if value is None else str(value)


def flat_attributes(driver: str, attributes: Mapping[str, Any]) -> dict[str, str]:
    """Attribute values as text under their qualified name, and under the short name for the driver's domain."""
    flat: dict[str, str] = {}
    for name, attr in attributes.items():
        # The common case first (one plain string, int or bool): the same text as the general path.
        if type(attr) is dict and len(attr) == 1:
            ((kind, value),) = attr.items()
            vtype = type(value)
            if kind == "string" and vtype is str:
                text = value
            elif kind == "int" and vtype is int:
                text = str(value)
            elif kind == "bool" and vtype is bool:
                text = "true" if value else "false"
            else:
                text = attribute_text(attribute_value(attr))
        elif not isinstance(attr, Mapping):
            continue
        else:
            text = attribute_text(attribute_value(attr))
        if "/" not in name:  # qualify(): the driver's own domain, under both names
            flat[f"{driver}/{name}"] = text
            flat[name] = text
            continue
        flat[name] = text
        domain, _, short = name.rpartition("/")
        if domain == driver:
            flat[short] = text
    return flat


def uses_advanced_features(device: Mapping[str, Any]) -> bool:
    """Taints, counter consumption or list attributes lower the slice's device limit to 64."""
    if device.get("taints") or device.get("consumesCounters"):
        return True
    attributes = device.get("attributes")
    if not isinstance(attributes, Mapping):
        return False
    return any(
        isinstance(attr, Mapping) and any(kind in attr for kind in LIST_ATTRIBUTE_TYPES)
        for attr in attributes.values()
    )


def device_limit(devices: Iterable[Mapping[str, Any]]) -> int:
    """How many devices one ResourceSlice may hold, given the devices it holds."""
    advanced = any(uses_advanced_features(d) for d in devices)
    return MAX_DEVICES_PER_SLICE_WITH_ADVANCED_FEATURES if advanced else MAX_DEVICES_PER_SLICE


def numa_node(attributes: Mapping[str, Any]) -> int | None:
    attr = attributes.get(NUMA_ATTRIBUTE)
    if not isinstance(attr, Mapping):
        return None
    value = attribute_value(attr)
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --------------------------------------------------------------------------------- slices and pools


def slice_spec(slice_obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = slice_obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def pool_id(slice_obj: Mapping[str, Any]) -> tuple[str, str]:
    spec = slice_spec(slice_obj)
    return (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))


def pool_generation(slice_obj: Mapping[str, Any]) -> int:
    return int((slice_spec(slice_obj).get("pool") or {}).get("generation") or 0)


def node_selection(spec: Mapping[str, Any]) -> tuple[str, str]:
    """How a slice (or, with per-device selection, a device) reaches nodes, and the node if one."""
    if spec.get("nodeName"):
        return "node", str(spec["nodeName"])
    if spec.get("allNodes"):
        return "allNodes", ""
    if spec.get("nodeSelector"):
        return "nodeSelector", ""
    if spec.get("perDeviceNodeSelection"):
        return "perDevice", ""
    return "", ""


def pool_problem(
    *,
    device_names: Iterable[str],
    counter_sets: Iterable[tuple[str, Iterable[str]]] = (),
    consumptions: Iterable[tuple[str, Iterable[str]]] = (),
    partitionable: bool = True,
) -> str | None:
    """Why a complete pool is invalid, in upstream's words, or None.

    `device_names` are the devices that must be unique; `counter_sets` (name, counter names) the
    pool's declared counter sets; `consumptions` (counter set, counter names) what devices consume.
    Without PartitionableDevices counters are not looked at.

    The allocator asks per node, as upstream does: the names of the devices in slices relevant
    for the node, every counter set of the pool's generation, and the consumptions of every
    device of the pool (also those published for other nodes). The inventory asks for the whole
    pool, so a name repeated in slices of two different nodes is a problem it shows while the
    allocator (like the scheduler) still allocates on either node."""
    seen: set[str] = set()
    for name in device_names:
        if name in seen:
            return f"duplicate device name {name}"
        seen.add(name)
    if not partitionable:
        return None
    declared: dict[str, set[str]] = {}
    for set_name, counters in counter_sets:
        if set_name in declared:
            return f"duplicate counter set name {set_name}"
        declared[set_name] = set(counters)
    for set_name, counters in consumptions:
        known = declared.get(set_name)
        if known is None:
            return f"counter set {set_name} not found"
        for counter in counters:
            if counter not in known:
                return f"counter {counter} not found in counter set {set_name}"
    return None


@dataclass(frozen=True)
class PoolState:
    """A pool as the cluster publishes it now (not relative to a node)."""

    driver: str
    name: str
    generation: int
    #: the slices at `generation`, by name
    slices: tuple[Mapping[str, Any], ...]
    #: resourceSliceCount at `generation`
    expected: int
    #: why the pool is invalid (see `pool_problem`), None when valid or incomplete
    problem: str | None

    @property
    def complete(self) -> bool:
        return len(self.slices) == self.expected

    @property
    def usable(self) -> bool:
        """Devices of the pool can be allocated: complete and valid."""
        return self.complete and self.problem is None

    @property
    def counter_sets(self) -> dict[str, dict[str, str]]:
        """{counter set: {counter: quantity string}} of the slices at `generation`."""
        out: dict[str, dict[str, str]] = {}
        for s in self.slices:
            for cs in slice_spec(s).get("sharedCounters") or []:
                out.setdefault(str(cs.get("name", "")), {}).update(
                    {str(c): str((v or {}).get("value", "0")) for c, v in (cs.get("counters") or {}).items()}
                )
        return out

    def devices(self) -> Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]:
        """(slice, device JSON) of every device at `generation`, slices by name, devices in slice order."""
        for s in self.slices:
            for d in slice_spec(s).get("devices") or []:
                if isinstance(d, Mapping):
                    yield s, d


def pool_state(
    driver: str, name: str, slices: Iterable[Mapping[str, Any]], *, partitionable: bool = True
) -> PoolState:
    """The state of one pool from all its slices (any generation)."""
    every = list(slices)
    generation = max((pool_generation(s) for s in every), default=0)
    current = sorted(
        (s for s in every if pool_generation(s) == generation),
        key=lambda s: str((s.get("metadata") or {}).get("name", "")),
    )
    expected = (
        int((slice_spec(current[0]).get("pool") or {}).get("resourceSliceCount") or 0) if current else 0
    )
    problem = None
    if len(current) == expected:
        problem = pool_problem(
            device_names=(
                str(d.get("name", "")) for s in current for d in slice_spec(s).get("devices") or []
            ),
            counter_sets=(
                (str(cs.get("name", "")), (cs.get("counters") or {}).keys())
                for s in current
                for cs in slice_spec(s).get("sharedCounters") or []
            ),
            consumptions=(
                (str(c.get("counterSet", "")), (c.get("counters") or {}).keys())
                for s in current
                for d in slice_spec(s).get("devices") or []
                for c in d.get("consumesCounters") or []
            ),
            partitionable=partitionable,
        )
    return PoolState(driver, name, generation, tuple(current), expected, problem)


def pools_of(
    slices: Iterable[Mapping[str, Any]], *, partitionable: bool = True
) -> dict[tuple[str, str], PoolState]:
    """Every pool the slices publish, keyed by (driver, pool)."""
    grouped: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for s in slices:
        grouped.setdefault(pool_id(s), []).append(s)
    return {key: pool_state(*key, group, partitionable=partitionable) for key, group in grouped.items()}


# --------------------------------------------------------------------------------- claims


def split_request(request: str) -> tuple[str, str]:
    """`gpu/big` → ("gpu", "big"); `gpu` → ("gpu", "")."""
    main, _, sub = request.partition("/")
    return main, sub


def claim_state(claim: Mapping[str, Any]) -> str:
    status = claim.get("status") or {}
    if status.get("reservedFor"):
        return "reserved"
    if status.get("allocation"):
        return "allocated"
    return "pending"


def allocation_results(claim: Mapping[str, Any]) -> list[JSON]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


def is_extended_resource_claim(claim: Mapping[str, Any]) -> bool:
    """The scheduler's claim for a pod's DRA-backed extended resources (see `dra.extended`)."""
    annotations = (claim.get("metadata") or {}).get("annotations") or {}
    return annotations.get("resource.kubernetes.io/extended-resource-claim") == "true"


def owner_pod(claim: Mapping[str, Any]) -> str:
    for ref in (claim.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "Pod" and ref.get("controller"):
            return str(ref.get("name", ""))
    return ""


def request_classes(claim: Mapping[str, Any]) -> dict[str, str]:
    """Result request name ("req", or "req/sub" for a firstAvailable subrequest) → DeviceClass name."""
    out: dict[str, str] = {}
    for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = str(r.get("name", ""))
        if r.get("exactly"):
            out[name] = str(r["exactly"].get("deviceClassName", ""))
        for sub in r.get("firstAvailable") or []:
            out[f"{name}/{sub.get('name')}"] = str(sub.get("deviceClassName", ""))
    return out


def claim_device_classes(claim: Mapping[str, Any]) -> list[str]:
    """The classes a claim asks for, in request order, each once."""
    names: list[str] = []
    for name in request_classes(claim).values():
        if name and name not in names:
            names.append(name)
    return names


def attribute_index_lines(
    driver: str, attributes: Mapping[str, Any], flat: Mapping[str, str] | None = None
) -> list[str]:
    """`name=value` for every attribute under its qualified and short names (as `flat_attributes`),
    plus one `name=element` per element of a list-typed attribute (DRAListTypeAttributes), so that a
    `name=value` filter finds a device whose list includes the value. `flat`: `flat_attributes` of
    the same attributes, when the caller has it already."""
    if flat is None:
        flat = flat_attributes(driver, attributes)
    lines = [f"{k}={v}" for k, v in flat.items()]
    for name, attr in attributes.items():
        if not isinstance(attr, Mapping):
            continue
        if type(attr) is dict and len(attr) == 1 and next(iter(attr)) in SCALAR_ATTRIBUTE_TYPES:
            continue  # one scalar value: no list elements (what attribute_value would say)
        value = attribute_value(attr)
        if not isinstance(value, list) or len(value) < 2:
            continue
        qualified = qualify(driver, name)
        domain, _, short = qualified.rpartition("/")
        keys = [qualified, short] if domain == driver else [qualified]
        lines += [f"{k}={attribute_text(v)}" for k in keys for v in value]
    return lines
