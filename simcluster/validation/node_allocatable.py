"""``device.nodeAllocatableResources`` (DRANodeAllocatableResources, alpha): node resources a device
stands for (``mapping``) or costs on the side (``overhead``), checked in the words of upstream's
TestValidateResourceSlice: keys are cpu, memory or hugepages-<size>; each entry has a mapping or an
overhead (or both); a mapping is ``capacityKey`` (one of the device's capacities) with a positive
``capacityMultiplier``, or a positive ``deviceMultiplier``; an overhead has ``perPod`` and/or
``perContainer``, neither negative.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from simcluster.schema import Causes, child, key_path
from simcluster.validation.capacity import quantity_of
from simcluster.validation.shared import as_map

#: what upstream accepts as a key: cpu, memory and hugepages-<size> (ephemeral-storage and extended
#: resources are refused)
_STANDARD: Final = frozenset({"cpu", "memory"})
_HUGEPAGES: Final = re.compile(r"^hugepages-[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE])?$")


def _quantity(causes: Causes, path: str, value: Any, *, positive: bool = False) -> None:
    q = quantity_of(value)
    if q is None:
        causes.invalid(path, value, "must be a quantity")
    elif positive and q.sign() <= 0:
        causes.invalid(path, str(q), "must be positive")
    elif q.sign() < 0:
        causes.invalid(path, str(q), "must be non-negative")


def check_node_allocatable_resources(causes: Causes, path: str, device: dict[str, Any]) -> None:
    resources = device.get("nodeAllocatableResources")
    if resources is None:
        return
    field = child(path, "nodeAllocatableResources")
    capacities = as_map(device.get("capacity"))
    for name, entry in as_map(resources).items():
        entry_path = key_path(field, str(name))
        if name not in _STANDARD and not _HUGEPAGES.fullmatch(str(name)):
            causes.invalid(entry_path, name, "must be a node allocatable resource name")
        spec = as_map(entry)
        mapping, overhead = spec.get("mapping"), spec.get("overhead")
        if mapping is None and overhead is None:
            causes.required(entry_path, "at least one of mapping or overhead must be set")
        if mapping is not None:
            _check_mapping(causes, child(entry_path, "mapping"), as_map(mapping), capacities)
        if overhead is not None:
            o = as_map(overhead)
            o_path = child(entry_path, "overhead")
            if o.get("perPod") is None and o.get("perContainer") is None:
                causes.invalid(o_path, "", "at least one of perPod or perContainer must be set")
            for part in ("perPod", "perContainer"):
                if o.get(part) is not None:
                    _quantity(causes, child(o_path, part), o[part])


def _check_mapping(causes: Causes, path: str, mapping: dict[str, Any], capacities: dict[str, Any]) -> None:
    key, factor, per_device = (
        mapping.get("capacityKey"),
        mapping.get("capacityMultiplier"),
        mapping.get("deviceMultiplier"),
    )
    key_field, factor_field = child(path, "capacityKey"), child(path, "capacityMultiplier")
    if key is None and per_device is None and factor is None:
        causes.required(path, "exactly one of `capacityKey` or `deviceMultiplier` is required")
        return
    if key is not None and per_device is not None:
        causes.invalid(
            path, None, "exactly one of `capacityKey` or `deviceMultiplier` is required, but both are set"
        )
    if key is not None:
        if key == "":
            causes.invalid(key_field, "", "capacityKey must not be an empty string")
        elif key not in capacities:
            causes.add("FieldValueNotFound", key_field, f"Not found: {json.dumps(key)}")
        if factor is None:
            causes.required(factor_field, "capacityMultiplier is required when capacityKey is set")
    elif factor is not None:
        causes.required(key_field, "capacityKey is required when capacityMultiplier is set")
    if factor is not None:
        _quantity(causes, factor_field, factor, positive=True)
    if per_device is not None:
        _quantity(causes, child(path, "deviceMultiplier"), per_device, positive=True)
