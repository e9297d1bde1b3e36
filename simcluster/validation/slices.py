"""ResourceSlice rules (dra-api.md §2) beyond what the JSON schema checks: pool and node selection,
devices, attributes, capacities, taints, shared counters and their consumption.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from dra.objects import LIST_ATTRIBUTE_TYPES, SCALAR_ATTRIBUTE_TYPES, device_limit
from simcluster.schema import Causes, child, key_path
from simcluster.validation.capacity import check_request_policy
from simcluster.validation.names import (
    device_name,
    device_qualified_name,
    dns_label,
    dns_subdomain,
    driver_name,
    pool_name,
)
from simcluster.validation.node_allocatable import check_node_allocatable_resources
from simcluster.validation.shared import (
    Obj,
    as_list,
    as_map,
    check_binding_conditions,
    check_node_selector,
    check_skip_node_operations,
    check_taint,
    entries,
    exactly_one,
    max_items,
    unique,
)

_NODE_SELECTION: Final = ["nodeName", "nodeSelector", "allNodes", "perDeviceNodeSelection"]
_DEVICE_NODE_SELECTION: Final = ["nodeName", "nodeSelector", "allNodes"]
_ATTRIBUTE_FIELDS: Final = frozenset(SCALAR_ATTRIBUTE_TYPES + LIST_ATTRIBUTE_TYPES)

_SEMVER_RE: Final = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def _immutable(causes: Causes, path: str, new: Any, old: Any) -> None:
    if new != old:
        causes.immutable(path, new)


def _old_devices(old: dict[str, Any] | None) -> dict[str, Obj]:
    """The stored devices by name: unchanged taints and capacities are not validated again."""
    devices: dict[str, Obj] = {}
    for device in as_list(as_map(as_map(old).get("spec")).get("devices")):
        name = as_map(device).get("name")
        if isinstance(name, str):
            devices[name] = as_map(device)
    return devices


def _node_selector(causes: Causes, path: str, selector: Any) -> None:
    check_node_selector(causes, path, selector)  # core validation
    terms = as_list(as_map(selector).get("nodeSelectorTerms"))
    if len(terms) != 1:  # DRA validation
        causes.invalid(
            child(path, "nodeSelectorTerms"), len(terms), "must have exactly one node selector term"
        )


def check_resource_slice(causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    spec = as_map(obj.get("spec"))
    driver_name(causes, "spec.driver", spec.get("driver"))
    pool = spec.get("pool")
    if not isinstance(pool, dict):
        causes.required("spec.pool")
        pool = {}
    pool_name(causes, "spec.pool.name", pool.get("name"))
    count = pool.get("resourceSliceCount")
    if not isinstance(count, int) or count <= 0:
        causes.invalid("spec.pool.resourceSliceCount", count or 0, "must be greater than zero")
    generation = pool.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.invalid("spec.pool.generation", generation, "must be greater than or equal to zero")
    if old is not None:
        old_spec = as_map(old.get("spec"))
        _immutable(causes, "spec.pool.name", pool.get("name"), as_map(old_spec.get("pool")).get("name"))
        _immutable(causes, "spec.driver", spec.get("driver"), old_spec.get("driver"))
        _immutable(causes, "spec.nodeName", spec.get("nodeName"), old_spec.get("nodeName"))

    if spec.get("nodeName") == "":
        causes.invalid("spec.nodeName", "", "must be either unset or set to a non-empty string")
    elif spec.get("nodeName") is not None:
        dns_subdomain(causes, "spec.nodeName", spec["nodeName"])
    for flag in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(flag) is False:
            causes.invalid(f"spec.{flag}", False, "must be either unset or set to true")
    chosen = exactly_one(causes, "spec", spec, _NODE_SELECTION)
    if "nodeSelector" in chosen:
        _node_selector(causes, "spec.nodeSelector", spec["nodeSelector"])
    per_device = spec.get("perDeviceNodeSelection") is True

    devices = as_list(spec.get("devices"))
    if spec.get("devices") is not None and spec.get("sharedCounters") is not None:
        causes.invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed")
    limit = device_limit(as_map(d) for d in devices)
    if len(devices) > limit:
        causes.too_many("spec.devices", len(devices), limit)
    else:
        names: set[str] = set()
        old_devices = _old_devices(old)
        for index, device in enumerate(devices):
            path = f"spec.devices[{index}]"
            name = as_map(device).get("name")
            _check_device(causes, path, as_map(device), per_device, old_devices.get(str(name)))
            if isinstance(name, str):
                unique(causes, path, name, names)
    _check_shared_counters(causes, spec.get("sharedCounters"))
    if spec.get("partitionTypeAttribute") is not None:
        _check_partition_type_attribute(causes, spec, devices)
    check_skip_node_operations(causes, "spec.skipNodeOperations", spec.get("skipNodeOperations"))
    driver = spec.get("driver")
    if isinstance(driver, str) and driver != driver.lower():
        return [
            f"spec.driver: driver names should be lowercase; {json.dumps(driver)} contains uppercase characters"
        ]
    return []


def _check_partition_type_attribute(causes: Causes, spec: dict[str, Any], devices: list[Any]) -> None:
    name = str(spec["partitionTypeAttribute"])
    consuming = [(i, as_map(d)) for i, d in enumerate(devices) if as_map(d).get("consumesCounters")]
    if not consuming:
        causes.invalid(
            "spec.partitionTypeAttribute",
            name,
            "may only be set on a slice which declares devices that consume counters",
        )
        return
    probe = Causes()
    device_qualified_name(probe, "spec.partitionTypeAttribute", name, fully=True)
    if probe:
        causes.items.extend(probe.items)
        return
    # An attribute in the driver's own domain may also be declared without the domain.
    bare = name.removeprefix(f"{spec.get('driver')}/") if name.startswith(f"{spec.get('driver')}/") else ""
    for index, device in consuming:
        attributes = as_map(device.get("attributes"))
        attribute = attributes.get(name, attributes.get(bare) if bare else None)
        path = f"spec.devices[{index}].attributes[{name}]"
        if attribute is None:
            causes.required(
                path,
                "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set",
            )
        elif as_map(attribute).get("string") is None:
            causes.invalid(
                path,
                attribute,
                "must be a string value because `partitionTypeAttribute` names this attribute",
            )


def _check_shared_counters(causes: Causes, counter_sets: Any) -> None:
    seen: set[str] = set()
    for path, counter_set in entries(causes, "spec.sharedCounters", counter_sets, 8):
        name = as_map(counter_set).get("name")
        dns_label(causes, child(path, "name"), name)
        _check_counter_names(causes, child(path, "counters"), as_map(counter_set).get("counters"))
        if isinstance(name, str):
            unique(causes, path, name, seen)


def _check_counter_names(causes: Causes, path: str, counters: Any) -> None:
    """The counters of a counter set, or those a device consumes: at least one, at most 32, DNS labels."""
    if not counters:
        causes.required(path)
    elif max_items(causes, path, counters, 32):
        for counter in as_map(counters):
            dns_label(causes, path, counter)


def _check_device(
    causes: Causes, path: str, device: dict[str, Any], per_device: bool, old_device: Obj | None
) -> None:
    device_name(causes, path + ".name", device.get("name"))
    attributes = as_map(device.get("attributes"))
    capacity = as_map(device.get("capacity"))
    combined = len(attributes) + len(capacity)
    if combined > 32:
        causes.invalid(path, combined, "the total number of attributes and capacities must not exceed 32")
    values = 0
    attrs_path = path + ".attributes"
    for attr_name, attribute in attributes.items():
        device_qualified_name(causes, attrs_path, attr_name)
        values += _check_attribute(causes, attrs_path, attr_name, attribute)
    if values > 48:
        causes.invalid(path, values, "the total number of attribute values must not exceed 48")

    if old_device is None or old_device.get("capacity") != device.get("capacity"):
        for cap_name, cap in capacity.items():
            cap_path = key_path(child(path, "capacity"), cap_name)
            device_qualified_name(causes, child(path, "capacity"), cap_name)
            policy = as_map(cap).get("requestPolicy")
            if policy is None:
                continue
            if not device.get("allowMultipleAllocations"):
                causes.forbidden(child(cap_path, "requestPolicy"), "allowMultipleAllocations must be true")
            else:
                check_request_policy(
                    causes, child(cap_path, "requestPolicy"), as_map(policy), as_map(cap).get("value")
                )

    taints = device.get("taints")
    # Unchanged taints are not validated again: a stored effect from a later release stays valid.
    changed = old_device is None or old_device.get("taints") != taints
    if taints and changed:
        for entry, taint in entries(causes, child(path, "taints"), taints, 16):
            check_taint(causes, entry, taint, None)

    if device.get("consumesCounters"):
        _check_consumes_counters(causes, child(path, "consumesCounters"), device["consumesCounters"])
    check_binding_conditions(causes, path, device)
    check_node_allocatable_resources(causes, path, device)

    present = [f for f in _DEVICE_NODE_SELECTION if device.get(f) is not None]
    if per_device:
        if device.get("nodeName") == "":
            causes.invalid(child(path, "nodeName"), "", "must not be empty")
        elif device.get("nodeName") is not None:
            dns_subdomain(causes, child(path, "nodeName"), device["nodeName"])
        if device.get("allNodes") is False:
            causes.invalid(child(path, "allNodes"), False, "must be either unset or set to true")
        exactly_one(
            causes,
            path,
            device,
            _DEVICE_NODE_SELECTION,
            detail="exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
            "`perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )
        if device.get("nodeSelector") is not None:
            _node_selector(causes, child(path, "nodeSelector"), device["nodeSelector"])
    elif present:
        causes.invalid(
            path,
            None,
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set "
            "to true in the ResourceSlice spec",
        )


def _check_attribute(causes: Causes, attrs_path: str, name: str, attribute: Any) -> int:
    """Check one DeviceAttribute; returns how many values it holds (towards the 48 per device)."""
    if not isinstance(attribute, dict):
        attribute = {}
    set_fields = [f for f, v in attribute.items() if v is not None and f in _ATTRIBUTE_FIELDS]
    if len(set_fields) == 1 and set_fields[0] in ("int", "bool"):
        return 1  # the common case; the schema already checked the type
    path = f"{attrs_path}[{name}]"
    values = 0
    for field in set_fields:
        value = attribute[field]
        if field in LIST_ATTRIBUTE_TYPES:
            elements = as_list(value)
            if not elements:
                causes.invalid(child(path, field), "array", "must not be empty if specified")
            for index, element in enumerate(elements):
                _check_attribute_scalar(causes, f"{child(path, field)}[{index}]", field[:-1], element)
            values += len(elements)
        else:
            if field in ("string", "version"):
                _check_attribute_scalar(causes, child(path, field), field, value)
            values += 1
    if not set_fields:
        causes.invalid(path, "", "exactly one value must be specified")
    elif len(set_fields) > 1:
        causes.invalid(path, attribute, "exactly one value must be specified")
    return max(values, 1)


def _check_attribute_scalar(causes: Causes, path: str, kind: str, value: Any) -> None:
    if kind in ("string", "version") and isinstance(value, str):
        if kind == "version" and not _SEMVER_RE.fullmatch(value):
            causes.invalid(path, value, "must be a string compatible with semver.org spec 2.0.0")
        if len(value) > 64:
            causes.too_long(path, 64)


def _check_consumes_counters(causes: Causes, path: str, consumes: Any) -> None:
    if not consumes:
        return
    seen: set[str] = set()
    for entry_path, entry in entries(causes, path, consumes, 2):
        counter_set = as_map(entry).get("counterSet")
        dns_label(causes, child(entry_path, "counterSet"), counter_set)
        _check_counter_names(causes, child(entry_path, "counters"), as_map(entry).get("counters"))
        groups = as_map(entry).get("compatibilityGroups")
        group_seen: set[Any] = set()
        for group_path, group in entries(causes, child(entry_path, "compatibilityGroups"), groups, 2):
            unique(causes, group_path, group, group_seen)
        if isinstance(counter_set, str):
            unique(causes, entry_path, counter_set, seen)
