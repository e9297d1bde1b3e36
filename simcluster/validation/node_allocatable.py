"""``device.nodeAllocatableResources`` (DRANodeAllocatableResources, alpha): node resources a device
stands for (``mapping``) or costs on the side (``overhead``). Rules from the 1.37 API documentation:
keys are node allocatable resources, never extended resources; each entry has a mapping or an
overhead (or both); a mapping is ``capacityKey`` with ``capacityMultiplier``, or ``deviceMultiplier``;
an overhead has ``perPod`` and/or ``perContainer``; quantities are not negative.
"""

from __future__ import annotations

import re
from typing import Any, Final

from simcluster.schema import Causes, child, key_path
from simcluster.validation.capacity import quantity_of
from simcluster.validation.shared import as_map

_STANDARD: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
_HUGEPAGES: Final = re.compile(r"^hugepages-[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei|[kMGTPE])?$")


def _quantity(causes: Causes, path: str, value: Any) -> None:
    q = quantity_of(value)
    if q is None:
        causes.invalid(path, value, "must be a quantity")
    elif q.sign() < 0:
        causes.invalid(path, value, "must be greater than or equal to 0")


def check_node_allocatable_resources(causes: Causes, path: str, device: dict[str, Any]) -> None:
    resources = device.get("nodeAllocatableResources")
    if resources is None:
        return
    field = child(path, "nodeAllocatableResources")
    capacities = as_map(device.get("capacity"))
    for name, entry in as_map(resources).items():
        entry_path = key_path(field, str(name))
        if name not in _STANDARD and not _HUGEPAGES.fullmatch(str(name)):
            causes.invalid(
                field,
                name,
                "must be a node allocatable resource (cpu, memory, ephemeral-storage or hugepages-<size>),"
                " not an extended resource",
            )
        spec = as_map(entry)
        mapping, overhead = spec.get("mapping"), spec.get("overhead")
        if mapping is None and overhead is None:
            causes.required(entry_path, "at least one of `mapping` or `overhead` is required")
        if mapping is not None:
            _check_mapping(causes, child(entry_path, "mapping"), as_map(mapping), capacities)
        if overhead is not None:
            o = as_map(overhead)
            o_path = child(entry_path, "overhead")
            if o.get("perPod") is None and o.get("perContainer") is None:
                causes.required(o_path, "at least one of `perPod` or `perContainer` is required")
            for part in ("perPod", "perContainer"):
                if o.get(part) is not None:
                    _quantity(causes, child(o_path, part), o[part])


def _check_mapping(causes: Causes, path: str, mapping: dict[str, Any], capacities: dict[str, Any]) -> None:
    key, factor, per_device = (
        mapping.get("capacityKey"),
        mapping.get("capacityMultiplier"),
        mapping.get("deviceMultiplier"),
    )
    if key is None and per_device is None:
        causes.required(path, "exactly one of `capacityKey` or `deviceMultiplier` is required")
        return
    if key is not None and per_device is not None:
        causes.invalid(
            path, None, "exactly one of `capacityKey` or `deviceMultiplier` is required, but both are set"
        )
    if key is not None:
        if key not in capacities:
            causes.invalid(
                child(path, "capacityKey"), key, "must be the name of one of the device's capacities"
            )
        if factor is None:
            causes.required(child(path, "capacityMultiplier"), "required when `capacityKey` is set")
    elif factor is not None:
        causes.forbidden(child(path, "capacityMultiplier"), "may only be set together with `capacityKey`")
    if factor is not None:
        _quantity(causes, child(path, "capacityMultiplier"), factor)
    if per_device is not None:
        _quantity(causes, child(path, "deviceMultiplier"), per_device)
