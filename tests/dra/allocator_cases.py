"""Builders for allocator test inputs (Kubernetes JSON dicts, as the API serves them) and our case
table's `Case` type with the check every named case runs (``test_allocator.py``,
``test_allocator_resources.py``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from dra.allocator import DEFAULT_FEATURES, AllocationError, SelectorBackend, allocate

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


# --------------------------------------------------------------------------- the case table

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
FOUR_GPUS = [resource_slice("node-1-gpus", devices("gpu-0", "gpu-1", "gpu-2", "gpu-3"))]
NUMA_GPUS = [
    resource_slice(
        "node-1-gpus",
        [
            device(f"gpu-{i}", attrs={"resource.kubernetes.io/numaNode": i % 2, "model": "h200"})
            for i in range(4)
        ],
    )
]
NO_CC = DEFAULT_FEATURES - {"ConsumableCapacity"}
STABLE = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})


@dataclass
class Error:
    substring: str


@dataclass
class Case:
    name: str
    claims: list[J]
    slices: list[J] = field(default_factory=lambda: FOUR_GPUS)
    # Compact: per claim, "request=device" strings; or full allocation dicts; or None; or Error.
    expect: list[list[str]] | list[J] | None | Error = None
    classes: list[J] = field(default_factory=lambda: [GPU_CLASS])
    allocated: list[J] = field(default_factory=list)
    rules: list[J] = field(default_factory=list)
    node: J | None = field(default_factory=lambda: NODE)
    features: frozenset[str] = DEFAULT_FEATURES


TAINT_NS = {"key": "example.com/broken", "value": "ecc", "effect": "NoSchedule"}
TAINT_NE = {"key": "example.com/broken", "value": "ecc", "effect": "NoExecute"}
TOLERATE_BROKEN = [{"key": "example.com/broken", "operator": "Exists"}]
COUNTERS = [{"name": "gpu-0-mem", "counters": {"memory": {"value": "80Gi"}}}]


def partitioned(pool: str = "node-1", node: str | None = "node-1", prefix: str = "") -> list[J]:
    """One physical GPU (80Gi) offered as a full device or as two 40Gi halves."""

    def part(name: str, mem: str) -> J:
        return device(
            prefix + name,
            consumesCounters=[{"counterSet": "gpu-0-mem", "counters": {"memory": {"value": mem}}}],
        )

    return [
        resource_slice(f"{pool}-counters", [], pool=pool, node=None, count=2, sharedCounters=COUNTERS),
        resource_slice(
            f"{pool}-parts",
            [part("full", "80Gi"), part("half-0", "40Gi"), part("half-1", "40Gi")],
            pool=pool,
            node=node,
            count=2,
        ),
    ]


def shared_nic(capacity: J) -> list[J]:
    return [
        resource_slice(
            "node-1-nics",
            [device("nic-0", allowMultipleAllocations=True, capacity=capacity)],
        )
    ]


def _compact(allocation: dict[str, Any]) -> list[str]:
    return [f"{r['request']}={r['device']}" for r in allocation["devices"]["results"]]


def _ids() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


def check_case(case: Case, *, backend: SelectorBackend | None = None) -> None:
    """Allocate the case and compare with its expectation (compact, full dicts, None or an error)."""

    def run() -> list[dict[str, Any]] | None:
        return allocate(
            backend=backend,
            classes=case.classes,
            slices=case.slices,
            allocated_claims=case.allocated,
            claims=case.claims,
            node=case.node,
            taint_rules=case.rules,
            features=case.features,
            id_factory=_ids(),
            clock=lambda: NOW,
        )

    if isinstance(case.expect, Error):
        with pytest.raises(AllocationError, match=None) as info:
            run()
        assert case.expect.substring in str(info.value)
        return
    got = run()
    if case.expect is None or got is None:
        assert got == case.expect
    elif case.expect and isinstance(case.expect[0], list):
        assert [_compact(a) for a in got] == case.expect
    else:
        assert got == case.expect
