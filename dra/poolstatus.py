"""One pool's entry in a ResourcePoolStatusRequest's status (resource.k8s.io/v1alpha3, dra-api.md §4).

`pool_status_entry` counts a pool's devices as the request reports them:

* ``allocatedDevices`` — devices named by an allocation result of some claim (admin-access results do not
  count: they do not take the device away from others);
* ``unavailableDevices`` — unallocated devices that cannot be allocated now: a NoSchedule or NoExecute
  taint (the driver's, or a DeviceTaintRule's), or a counter set the allocated devices have used up;
* ``availableDevices`` — the rest.

Two summaries go with them, each at most 32 entries:

* ``partitionSummary`` (DRAPartitionableDevicesType): devices that consume counters, grouped by the
  partition-type attribute — the slice's ``partitionTypeAttribute``, else the request's
  ``defaultPartitionTypeAttribute``. Per type: ``total`` devices and how many are ``allocatable`` now
  (each counted on its own, as ``availableDevices`` is).
* ``shareableSummary`` (devices with ``allowMultipleAllocations``): how many are untouched and how many
  are partly used, and per capacity name the total, what allocations consume (``consumedCapacity``; a
  result without it consumes the whole value) and what is left.

An incomplete or invalid pool reports ``validationError`` and no counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dra.objects import PoolState, attribute_value, qualify, slice_spec
from dra.quantity import Quantity, QuantityError
from dra.taints import RuleIndex, TaintRule, effective_taints

JSON = dict[str, Any]
MAX_SUMMARY_ENTRIES = 32


def _quantity(text: Any) -> Quantity | None:
    if isinstance(text, Mapping):
        text = text.get("value")
    try:
        return Quantity.parse(str(text))
    except (QuantityError, ValueError):
        return None


def _attribute(driver: str, attributes: Mapping[str, Any], name: str) -> Any:
    """The value of `name` (fully qualified) among a device's attributes, short names in the driver's domain
    included."""
    for key, attr in attributes.items():
        if qualify(driver, str(key)) == name and isinstance(attr, Mapping):
            return attribute_value(attr)
    return None


def _left_counters(state: PoolState, allocated: set[str]) -> dict[tuple[str, str], Quantity]:
    left: dict[tuple[str, str], Quantity] = {}
    for counter_set, counters in state.counter_sets.items():
        for counter, value in counters.items():
            q = _quantity(value)
            if q is not None:
                left[(counter_set, counter)] = q
    for _s, device in state.devices():
        if str(device.get("name", "")) not in allocated:
            continue
        for consumption in device.get("consumesCounters") or []:
            counter_set = str(consumption.get("counterSet", ""))
            for counter, value in (consumption.get("counters") or {}).items():
                q = _quantity(value)
                key = (counter_set, str(counter))
                if q is not None and key in left:
                    left[key] = left[key] - q
    return left


def _counters_fit(device: Mapping[str, Any], left: Mapping[tuple[str, str], Quantity]) -> bool:
    for consumption in device.get("consumesCounters") or []:
        counter_set = str(consumption.get("counterSet", ""))
        for counter, value in (consumption.get("counters") or {}).items():
            q = _quantity(value)
            have = left.get((counter_set, str(counter)))
            if q is None or have is None or have < q:
                return False
    return True


def pool_status_entry(
    state: PoolState,
    *,
    results: Mapping[str, Sequence[Mapping[str, Any]]],
    rules: Iterable[TaintRule | Mapping[str, Any]] | RuleIndex = (),
    default_partition_attribute: str = "",
) -> JSON:
    """The status entry of one pool. `results` are the allocation results naming each device of the pool
    (by device name); `rules` the cluster's DeviceTaintRules."""
    driver, pool = state.driver, state.name
    entry: JSON = {
        "driver": driver,
        "poolName": pool,
        "generation": state.generation,
        "resourceSliceCount": state.expected,
    }
    node = slice_spec(state.slices[0]).get("nodeName") if state.slices else None
    if node:
        entry["nodeName"] = node
    if not state.complete:
        entry["validationError"] = (
            f"incomplete pool: {len(state.slices)} of {state.expected} slices published"
        )
        return entry
    if state.problem is not None:
        entry["validationError"] = f"invalid pool: {state.problem}"[:256]
        return entry

    index = rules if isinstance(rules, RuleIndex) else RuleIndex.of(rules)
    allocated = {name for name, rs in results.items() if any(not r.get("adminAccess") for r in rs)}
    left = _left_counters(state, allocated)
    total = taken = unavailable = 0
    partitions: dict[tuple[str, str], list[int]] = {}
    shareable = {"full": 0, "partial": 0}
    capacity: dict[str, list[Quantity]] = {}
    for slice_obj, device in state.devices():
        name = str(device.get("name", ""))
        total += 1
        taints = effective_taints(
            driver=driver, pool=pool, device=name, slice_taints=device.get("taints") or (),
            rules=index.rules_for(driver, pool, name),
        )  # fmt: skip
        usable = not any(t.blocks for t in taints) and _counters_fit(device, left)
        free = name not in allocated
        if not free:
            taken += 1
        elif not usable:
            unavailable += 1
        if device.get("consumesCounters"):
            attribute = str(
                slice_spec(slice_obj).get("partitionTypeAttribute") or default_partition_attribute
            )
            value = _attribute(driver, device.get("attributes") or {}, attribute) if attribute else None
            if value is not None:
                counts = partitions.setdefault((attribute, str(value)), [0, 0])
                counts[0] += 1
                counts[1] += 1 if free and usable else 0
        if device.get("allowMultipleAllocations"):
            _shareable(device, results.get(name) or [], usable, shareable, capacity)
    entry.update(
        totalDevices=total,
        allocatedDevices=taken,
        unavailableDevices=unavailable,
    )
    entry["availableDevices"] = total - taken - unavailable
    if partitions:
        entry["partitionSummary"] = [
            {"attribute": attribute, "type": kind, "total": n, "allocatable": ok}
            for (attribute, kind), (n, ok) in sorted(partitions.items())
        ][:MAX_SUMMARY_ENTRIES]
    if capacity or shareable["full"] or shareable["partial"]:
        entry["shareableSummary"] = {
            "fullyAvailableDevices": shareable["full"],
            "partiallyAvailableDevices": shareable["partial"],
            "capacity": [
                {"name": cap, "total": str(t), "consumed": str(c), "available": str(t - c)}
                for cap, (t, c) in sorted(capacity.items())
            ][:MAX_SUMMARY_ENTRIES],
        }
    return entry


def _shareable(
    device: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
    usable: bool,
    shareable: dict[str, int],
    capacity: dict[str, list[Quantity]],
) -> None:
    used = [r for r in results if not r.get("adminAccess")]
    left_any = False
    for cap, raw in (device.get("capacity") or {}).items():
        whole = _quantity(raw)
        if whole is None:
            continue
        consumed = Quantity.from_int(0)
        for r in used:
            q = _quantity((r.get("consumedCapacity") or {}).get(cap, raw))
            consumed = consumed + (q if q is not None else whole)
        sums = capacity.setdefault(str(cap), [Quantity.from_int(0), Quantity.from_int(0)])
        sums[0] = sums[0] + whole
        sums[1] = sums[1] + consumed
        left_any = left_any or consumed < whole
    if not usable:
        return
    if not used:
        shareable["full"] += 1
    elif left_any:
        shareable["partial"] += 1
