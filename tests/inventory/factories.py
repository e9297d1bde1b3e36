"""Rows for selector and API tests, built the way the mirror builds them (through BatchWriter)."""

from __future__ import annotations

import itertools
from typing import Any

from inventory.mirror.writer import BatchWriter, Event, Replace
from inventory.models import Device

_uid = itertools.count(1)
JSON = dict[str, Any]


def uid() -> str:
    return f"00000000-0000-0000-0000-{next(_uid):012d}"


def meta(name: str, *, namespace: str = "", rv: int = 1, **extra: Any) -> JSON:
    m: JSON = {
        "name": name,
        "uid": uid(),
        "resourceVersion": str(rv),
        "creationTimestamp": "2026-11-01T10:00:00Z",
    }
    if namespace:
        m["namespace"] = namespace
    m.update(extra)
    return m


def gpu(
    name: str, *, numa: int | None = None, model: str = "H100", taints: list[JSON] | None = None, **extra: Any
) -> JSON:
    attributes: JSON = {"model": {"string": model}, "driverVersion": {"version": "1.2.3"}}
    if numa is not None:
        attributes["resource.kubernetes.io/numaNode"] = {"int": numa}
    device: JSON = {"name": name, "attributes": attributes, "capacity": {"memory": {"value": "80Gi"}}}
    if taints:
        device["taints"] = taints
    device.update(extra)
    return device


def resource_slice(
    name: str,
    *,
    driver: str = "gpu.example.com",
    pool: str = "node-0",
    node: str = "node-0",
    generation: int = 1,
    count: int = 1,
    devices: list[JSON] | None = None,
    **spec_extra: Any,
) -> JSON:
    spec: JSON = {
        "driver": driver,
        "nodeName": node,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
        "devices": devices or [],
    }
    spec.update(spec_extra)
    if node == "":
        spec.pop("nodeName")
        spec["allNodes"] = True
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": meta(name), "spec": spec}


def device_class(
    name: str,
    *,
    expression: str | None = None,
    extended: str | None = None,
    created: str = "2026-11-01T10:00:00Z",
) -> JSON:
    spec: JSON = {"selectors": [{"cel": {"expression": expression or f'device.driver == "{name}"'}}]}
    if extended:
        spec["extendedResourceName"] = extended
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": meta(name, creationTimestamp=created),
        "spec": spec,
    }


def taint_rule(
    name: str, *, selector: JSON | None, effect: str = "NoSchedule", key: str = "example.com/maint"
) -> JSON:
    spec: JSON = {"taint": {"key": key, "value": "x", "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": meta(name),
        "spec": spec,
    }


def claim(
    name: str,
    *,
    namespace: str = "default",
    results: list[JSON] | None = None,
    reserved_for: list[JSON] | None = None,
    device_status: list[JSON] | None = None,
    annotations: JSON | None = None,
    owner_pod: str | None = None,
    cls: str = "gpu.example.com",
) -> JSON:
    extra: JSON = {}
    if annotations:
        extra["annotations"] = annotations
    if owner_pod:
        extra["ownerReferences"] = [
            {"apiVersion": "v1", "kind": "Pod", "name": owner_pod, "uid": uid(), "controller": True}
        ]
    obj: JSON = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta(name, namespace=namespace, **extra),
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": cls}}]}},
        "status": {},
    }
    if results is not None:
        obj["status"]["allocation"] = {"devices": {"results": results}}
    if reserved_for:
        obj["status"]["reservedFor"] = reserved_for
    if device_status:
        obj["status"]["devices"] = device_status
    return obj


def result(
    device: str, *, request: str = "gpu", pool: str = "node-0", driver: str = "gpu.example.com", **extra: Any
) -> JSON:
    return {"request": request, "driver": driver, "pool": pool, "device": device, **extra}


def pod(name: str, *, claim: str, namespace: str = "default", node: str = "node-0") -> JSON:
    """A running pod on `node` whose one container uses ResourceClaim `claim` (uid "uid-<name>")."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta(name, namespace=namespace, uid=f"uid-{name}"),
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": claim}],
        },
        "status": {"phase": "Running"},
    }


def write(*objs: tuple[str, JSON]) -> None:
    """Apply (kind, object) pairs as ADDED events in one batch."""
    BatchWriter().apply([Event(kind, "ADDED", obj, obj["metadata"]["resourceVersion"]) for kind, obj in objs])


def delete(kind: str, obj: JSON) -> None:
    BatchWriter().apply([Event(kind, "DELETED", obj, obj["metadata"]["resourceVersion"])])


def replace(kind: str, items: list[JSON], rv: str = "100") -> None:
    BatchWriter().apply([Replace(kind, items, rv)])


def device(name: str, pool: str = "node-0", driver: str = "gpu.example.com") -> Device:
    """The mirrored row of one device."""
    return Device.objects.get(driver=driver, pool=pool, name=name)


def partitionable_pool() -> None:
    counters = [{"name": "gpu-0-slices", "counters": {"memory": {"value": "40Gi"}}}]
    devices = [
        {
            "name": f"gpu-0-mig-{i}",
            "consumesCounters": [{"counterSet": "gpu-0-slices", "counters": {"memory": {"value": "20Gi"}}}],
        }
        for i in range(3)
    ]
    write(
        ("deviceclasses", device_class("gpu.example.com")),
        ("resourceslices", resource_slice("counters", count=2, sharedCounters=counters, devices=None)),
        ("resourceslices", resource_slice("parts", count=2, devices=devices)),
    )


def node(name: str, **labels: str) -> JSON:
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta(name, labels=labels)}
