"""The cluster-scoped kinds an administrator writes: DeviceClass, DeviceTaintRule and
ResourcePoolStatusRequest (dra-api.md §2 and §4).
"""

from __future__ import annotations

from typing import Any, Final

from dra.extended import is_extended_resource_name
from simcluster.schema import Causes, child
from simcluster.validation.cel import check_selectors, selector_expressions
from simcluster.validation.names import (
    device_qualified_name,
    dns_label,
    driver_name,
    pool_name,
)
from simcluster.validation.shared import as_map, check_conditions, check_opaque_config, check_taint, entries

# ---------------------------------------------------------------------------------------------------------
# DeviceClass


def check_device_class(causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None) -> list[str]:
    spec = as_map(obj.get("spec"))
    old_spec = as_map(as_map(old).get("spec")) if old is not None else None
    # Selectors (and configs) exactly as stored are not compiled (checked) again; any change checks all.
    selectors_stored = old_spec is not None and old_spec.get("selectors") == spec.get("selectors")
    stored = selector_expressions(spec, ("selectors",)) if selectors_stored else frozenset()
    check_selectors(causes, "spec.selectors", spec.get("selectors"), stored)
    config_stored = old_spec is not None and old_spec.get("config") == spec.get("config")
    check_opaque_config(causes, "spec.config", spec.get("config"), stored=config_stored)
    name = spec.get("extendedResourceName")
    if name is not None and not (isinstance(name, str) and is_extended_resource_name(name)):
        causes.invalid("spec.extendedResourceName", name, "must be a valid extended resource name")
    return []


# ---------------------------------------------------------------------------------------------------------
# DeviceTaintRule

EMPTY_SELECTOR_WARNING: Final = (
    "spec.deviceSelector: the empty deviceSelector matches all devices of all drivers in the cluster; "
    "set driver, pool or device to limit which devices get the taint"
)


def check_device_taint_rule(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    warnings: list[str] = []
    spec = as_map(obj.get("spec"))
    selector = spec.get("deviceSelector")
    if isinstance(selector, dict):
        if selector.get("driver") is not None:
            driver_name(causes, "spec.deviceSelector.driver", selector["driver"])
        if selector.get("pool") is not None:
            pool_name(causes, "spec.deviceSelector.pool", selector["pool"])
        if selector.get("device") is not None:
            dns_label(causes, "spec.deviceSelector.device", selector["device"])
        if not any(selector.get(f) for f in ("driver", "pool", "device")) and subresource != "status":
            warnings.append(EMPTY_SELECTOR_WARNING)
    old_effect = (
        as_map(as_map(as_map(old).get("spec")).get("taint")).get("effect") if old is not None else None
    )
    check_taint(causes, "spec.taint", spec.get("taint"), old_effect)
    check_conditions(causes, "status.conditions", as_map(obj.get("status")).get("conditions"), 8)
    return warnings


# ---------------------------------------------------------------------------------------------------------
# ResourcePoolStatusRequest (v1alpha3)


def check_pool_status_request(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    spec = as_map(obj.get("spec"))
    if old is not None:
        if subresource != "status" and spec != as_map(old.get("spec")):
            causes.immutable("spec", spec)
        old_status = old.get("status")
        if subresource == "status" and old_status is not None:
            # A filled status is the complete answer: delete and recreate the request to refresh it.
            if obj.get("status") != old_status:
                causes.immutable("status", obj.get("status"))
            return []
    if old is None or subresource != "status":
        driver = spec.get("driver")
        if not driver:
            causes.required("spec.driver", "driver name is required")
        else:
            driver_name(causes, "spec.driver", driver)
        if spec.get("poolName") == "":
            causes.invalid("spec.poolName", "", "must not be empty when specified")
        elif spec.get("poolName") is not None:
            pool_name(causes, "spec.poolName", spec["poolName"])
        limit = spec.get("limit")
        if isinstance(limit, int) and limit < 1:
            causes.invalid("spec.limit", limit, "must be at least 1")
        if isinstance(limit, int) and limit > 1000:
            causes.invalid("spec.limit", limit, "must not exceed 1000")
        attribute = spec.get("defaultPartitionTypeAttribute")
        if isinstance(attribute, str) and attribute:
            device_qualified_name(causes, "spec.defaultPartitionTypeAttribute", attribute, fully=True)
    status = obj.get("status")
    if isinstance(status, dict):
        count = status.get("poolCount")
        if isinstance(count, int) and count < 0:
            causes.invalid("status.poolCount", count, "must be non-negative")
        for entry, pool in entries(causes, "status.pools", status.get("pools"), 1000):
            driver_name(causes, child(entry, "driver"), as_map(pool).get("driver"))
            pool_name(causes, child(entry, "poolName"), as_map(pool).get("poolName"))
            for field in ("totalDevices", "allocatedDevices", "availableDevices", "unavailableDevices"):
                value = as_map(pool).get(field)
                if isinstance(value, int) and value < 0:
                    causes.invalid(child(entry, field), value, "must be non-negative")
            error = as_map(pool).get("validationError")
            if isinstance(error, str) and len(error.encode()) > 256:
                causes.too_long(child(entry, "validationError"), 256)
        check_conditions(causes, "status.conditions", status.get("conditions"), 10)
    return []
