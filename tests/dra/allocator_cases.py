"""Builders for allocator test inputs: Kubernetes JSON dicts, as the API serves them."""

from __future__ import annotations

from typing import Any

DRIVER = "gpu.example.com"
NODE = {"metadata": {"name": "node-1", "labels": {"zone": "a", "rack": "7"}}}
NODE_2 = {"metadata": {"name": "node-2", "labels": {"zone": "b"}}}

J = dict[str, Any]


def attribute(value: Any) -> J:
    if isinstance(value, dict):
        return value
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": value}


def device(name: str, *, attrs: J | None = None, capacity: J | None = None, **extra: Any) -> J:
    out: J = {"name": name}
    if attrs:
        out["attributes"] = {k: attribute(v) for k, v in attrs.items()}
    if capacity:
        out["capacity"] = {k: (v if isinstance(v, dict) else {"value": v}) for k, v in capacity.items()}
    out.update(extra)
    return out


def devices(*names: str, **kw: Any) -> list[J]:
    return [device(n, **kw) for n in names]


def resource_slice(
    name: str,
    devs: list[J],
    *,
    pool: str = "node-1",
    node: str | None = "node-1",
    generation: int = 1,
    count: int = 1,
    driver: str = DRIVER,
    **spec: Any,
) -> J:
    body: J = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
    }
    if node is not None and not {"nodeSelector", "allNodes", "perDeviceNodeSelection"} & set(spec):
        body["nodeName"] = node
    if devs:
        body["devices"] = devs
    body.update(spec)
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": body,
    }


def device_class(name: str = "gpu", *selectors: str, config: list[J] | None = None) -> J:
    spec: J = {"selectors": [{"cel": {"expression": e}} for e in selectors]}
    if config:
        spec["config"] = config
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


GPU_CLASS = device_class("gpu", f'device.driver == "{DRIVER}"')


def exactly(name: str, *, cls: str = "gpu", selectors: tuple[str, ...] = (), **fields: Any) -> J:
    body: J = {"deviceClassName": cls}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    body.update(fields)
    return {"name": name, "exactly": body}


def first_available(name: str, *subs: J) -> J:
    return {"name": name, "firstAvailable": list(subs)}


def sub(name: str, *, cls: str = "gpu", selectors: tuple[str, ...] = (), **fields: Any) -> J:
    body: J = {"name": name, "deviceClassName": cls}
    if selectors:
        body["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    body.update(fields)
    return body


def claim(name: str, *requests: J, constraints: list[J] | None = None, config: list[J] | None = None) -> J:
    devs: J = {"requests": list(requests)}
    if constraints:
        devs["constraints"] = constraints
    if config:
        devs["config"] = config
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": devs},
    }


def allocated(name: str, *results: J) -> J:
    c = claim(name, exactly("x"))
    c["status"] = {"allocation": {"devices": {"results": list(results)}}}
    return c


def result(
    device_name: str, *, request: str = "x", pool: str = "node-1", driver: str = DRIVER, **extra: Any
) -> J:
    return {"request": request, "driver": driver, "pool": pool, "device": device_name, **extra}


def taint_rule(name: str, taint: J, selector: J | None) -> J:
    spec: J = {"taint": taint}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": spec,
    }


def node_name_selector(node: str = "node-1") -> J:
    return {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }
