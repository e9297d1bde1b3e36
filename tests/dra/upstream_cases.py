"""The upstream allocator table, ported: builders, the case type and how an answer is compared.

Upstream's shared test table (``k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting``,
run against its stable, incubating and experimental allocators) is re-expressed here as Kubernetes JSON,
in our own words, one `Ported` case per upstream case; ``upstream`` names the case it ports. The test
modules ``test_allocator_upstream_*.py`` hold the cases; ``python -m tests.dra.upstream_report`` prints how
many give upstream's answer.

Upstream's vocabulary is kept so that a case can be checked against its original: drivers ``driver-a`` /
``driver-b``, classes ``class-a`` / ``class-b`` selecting their driver, ``node-1`` in ``region-1`` and
``node-2`` in ``region-2`` (both on planet ``earth``), pools and slices ``pool-N`` / ``slice-N``, claims
without a namespace (so messages read ``claim claim-0, request req-0: …`` as upstream's do).

An answer is compared the way upstream's table compares it: results of one claim in any order (a
gomega ``ConsistOf``) unless the case asks for ``ordered``; node selectors with terms, requirements and
values in any order; every ``shareID`` counts as the same; quantities by value; empty lists as absent
(the API omits them). ``allocationTimestamp`` is not compared: upstream's allocator leaves it to the
scheduler plugin, ours sets it (a deliberate difference, see ``dra.allocator``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dra.allocator import AllocationError, Allocator
from dra.quantity import Quantity

J = dict[str, Any]

DRIVER_A = "driver-a"
DRIVER_B = "driver-b"
CLASS_A = "class-a"
CLASS_B = "class-b"
NODE_1 = "node-1"
NODE_2 = "node-2"
ALL_NODES = "all nodes"
PER_DEVICE = "per device"
#: upstream's fully qualified attribute names
NUMA = f"{DRIVER_A}/numa"
VERSION = f"{DRIVER_A}/driverVersion"
STRING = f"{DRIVER_A}/stringAttribute"
BOOL = f"{DRIVER_A}/boolAttribute"
MISSING = f"{DRIVER_A}/NonExistentAttribute"
CAP0 = "capacity-0"
COUNTER_SET_1 = "counter-set-1"
COUNTER_SET_2 = "counter-set-2"
CAP1 = "capacity-1"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def node(name: str = NODE_1, region: str = "region-1") -> J:
    return {"metadata": {"name": name, "labels": {"region": region, "planet": "earth"}}}


NODE_1_OBJ = node()
NODE_2_OBJ = node(NODE_2, "region-2")


# --------------------------------------------------------------------------------------- classes


def opaque(driver: str, attribute: str) -> J:
    """Upstream's opaque config: parameters ``{attribute: attribute + "Value"}``."""
    return {"opaque": {"driver": driver, "parameters": {attribute: f"{attribute}Value"}}}


def device_class(name: str, driver: str, *, expression: str | None = None, config: str | None = None) -> J:
    spec: J = {"selectors": [{"cel": {"expression": expression or f'device.driver == "{driver}"'}}]}
    if config is not None:
        spec["config"] = [opaque(driver, config)]
    return {"metadata": {"name": name}, "spec": spec}


def multi_class(name: str, driver: str, multi: bool) -> J:
    """A class that also selects on ``allowMultipleAllocations``."""
    flag = "true" if multi else "false"
    return device_class(
        name, driver, expression=f'device.driver == "{driver}" && device.allowMultipleAllocations == {flag}'
    )


CLASS_A_OBJ = device_class(CLASS_A, DRIVER_A)
CLASS_B_OBJ = device_class(CLASS_B, DRIVER_B)


# --------------------------------------------------------------------------------------- devices


def s(value: str) -> J:
    return {"string": value}


def i(value: int) -> J:
    return {"int": value}


def b(value: bool) -> J:
    return {"bool": value}


def v(value: str) -> J:
    return {"version": value}


def dev(
    name: str,
    *,
    capacity: Mapping[str, str] | None = None,
    attrs: Mapping[str, J] | None = None,
    counters: Sequence[tuple[str, Mapping[str, str] | None]] = (),
    capacity_from_counters: bool = False,
    taints: Sequence[J] = (),
    node_name: str | None = None,
    all_nodes: bool = False,
    node_selector: J | None = None,
    binding: tuple[list[str], list[str]] | None = None,
    binds_to_node: bool | None = None,
    multi: bool = False,
    range_policy: Mapping[str, str] | None = None,
    valid_values: tuple[str, Mapping[str, str], Sequence[str]] | None = None,
) -> J:
    """A device. ``capacity_from_counters`` gives it a capacity per consumed counter (upstream's
    ``fromCounters``); ``range_policy`` capacities get upstream's policy (default 2, min 2, step 2,
    max 4); ``valid_values`` is (default, capacities, more valid values)."""
    out: J = {"name": name}
    if attrs is not None:
        out["attributes"] = dict(attrs)
    caps: J = {k: {"value": q} for k, q in (capacity or {}).items()}
    if counters:
        out["consumesCounters"] = [
            {"counterSet": cs, "counters": {c: {"value": q} for c, q in (cnt or {}).items()}}
            for cs, cnt in counters
        ]
        if capacity_from_counters:
            for _, cnt in counters:
                caps.update({c: {"value": q} for c, q in (cnt or {}).items()})
    for cap, value in (range_policy or {}).items():
        caps[cap] = {
            "value": value,
            "requestPolicy": {"default": "2", "validRange": {"min": "2", "step": "2", "max": "4"}},
        }
    if valid_values is not None:
        default, values, more = valid_values
        for cap, value in values.items():
            caps[cap] = {
                "value": value,
                "requestPolicy": {"default": default, "validValues": [default, *more]},
            }
    if caps:
        out["capacity"] = caps
    if taints:
        out["taints"] = list(taints)
    if node_name is not None:
        out["nodeName"] = node_name
    if all_nodes:
        out["allNodes"] = True
    if node_selector is not None:
        out["nodeSelector"] = node_selector
    if binding is not None:
        out["bindingConditions"], out["bindingFailureConditions"] = binding
    if binds_to_node is not None:
        out["bindsToNode"] = binds_to_node
    if multi:
        out["allowMultipleAllocations"] = True
    return out


def devs(count: int, start: int = 0) -> list[J]:
    """``device-<start>`` … plain devices."""
    return [dev(f"device-{n}") for n in range(start, start + count)]


def taint(effect: str, *, key: str = "taint-key", value: str = "taint-value") -> J:
    return {"key": key, "value": value, "effect": effect}


TAINT_NONE = taint("None")
TAINT_NO_SCHEDULE = taint("NoSchedule")
TAINT_NO_EXECUTE = taint("NoExecute", value="taint-value-2")
TOLERATE_NO_SCHEDULE = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
TOLERATE_NO_EXECUTE = {
    "operator": "Equal",
    "key": "taint-key",
    "value": "taint-value-2",
    "effect": "NoExecute",
}
TOLERATE_KEY1 = {"operator": "Exists", "key": "key1", "effect": "NoSchedule"}


# --------------------------------------------------------------------------------------- slices


def labels(key: str, *values: str) -> J:
    """A node selector on a label (upstream ``nodeLabelSelector``)."""
    return {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}]
    }


def local(name: str = NODE_1) -> J:
    """The node selector for one node by name (upstream ``localNodeSelector``)."""
    return {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}]
    }


def rslice(
    name: str,
    where: str | J,
    pool: str,
    driver: str,
    *devices: J,
    count: int = 1,
    generation: int = 1,
    counter_sets: Sequence[tuple[str, Mapping[str, str] | None]] = (),
) -> J:
    """A ResourceSlice. ``where``: a node name, `ALL_NODES`, `PER_DEVICE`, or a node selector."""
    spec: J = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": count},
    }
    if isinstance(where, dict):
        spec["nodeSelector"] = where
    elif where == ALL_NODES:
        spec["allNodes"] = True
    elif where == PER_DEVICE:
        spec["perDeviceNodeSelection"] = True
    else:
        spec["nodeName"] = where
    if devices:
        spec["devices"] = list(devices)
    if counter_sets:
        spec["sharedCounters"] = [
            {"name": cs, "counters": {c: {"value": q} for c, q in (cnt or {}).items()}}
            for cs, cnt in counter_sets
        ]
    return {"metadata": {"name": name}, "spec": spec}


def one_device(name: str, where: str | J, pool: str, driver: str, **kw: Any) -> J:
    """A slice with the single device ``device-1`` (upstream ``sliceWithOneDevice``)."""
    return rslice(name, where, pool, driver, dev("device-1"), **kw)


# --------------------------------------------------------------------------------------- claims


def cel(expression: str) -> J:
    return {"cel": {"expression": expression}}


def memory_at_least(amount: str) -> str:
    return f'device.capacity["{DRIVER_A}"].memory.compareTo(quantity("{amount}")) >= 0'


def _request_body(
    cls: str,
    count: int | None,
    selectors: Iterable[str | J],
    mode: str | None,
    admin: bool | None,
    tolerations: Sequence[J],
    capacity: str | None,
) -> J:
    body: J = {"deviceClassName": cls}
    if mode is not None:
        body["allocationMode"] = mode
    if count is not None:
        body["count"] = count
    sel = [cel(x) if isinstance(x, str) else x for x in selectors]
    if sel:
        body["selectors"] = sel
    if admin is not None:
        body["adminAccess"] = admin
    if tolerations:
        body["tolerations"] = list(tolerations)
    if capacity is not None:
        body["capacity"] = {"requests": {CAP0: capacity}}
    return body


def req(
    name: str,
    cls: str,
    count: int | None = 1,
    *selectors: str | J,
    mode: str | None = "ExactCount",
    admin: bool | None = None,
    tolerations: Sequence[J] = (),
    capacity: str | None = None,
) -> J:
    """An ``exactly`` request; selectors are CEL expressions (or raw selector dicts)."""
    return {"name": name, "exactly": _request_body(cls, count, selectors, mode, admin, tolerations, capacity)}


def all_req(name: str, cls: str, *selectors: str | J, **kw: Any) -> J:
    return req(name, cls, None, *selectors, mode="All", **kw)


def sub(
    name: str,
    cls: str,
    count: int | None = 1,
    *selectors: str | J,
    mode: str | None = "ExactCount",
    tolerations: Sequence[J] = (),
    capacity: str | None = None,
) -> J:
    return {"name": name, **_request_body(cls, count, selectors, mode, None, tolerations, capacity)}


def first_of(name: str, *subs: J) -> J:
    return {"name": name, "firstAvailable": list(subs)}


def uclaim(
    name: str,
    *requests: J,
    constraints: Sequence[J] = (),
    config: Sequence[J] = (),
) -> J:
    devices: J = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = list(constraints)
    if config:
        devices["config"] = list(config)
    return {"metadata": {"name": name}, "spec": {"devices": devices}}


def match(attribute: str, *requests: str) -> J:
    out: J = {"matchAttribute": attribute}
    if requests:
        out["requests"] = list(requests)
    return out


def distinct(attribute: str, *requests: str) -> J:
    out: J = {"distinctAttribute": attribute}
    if requests:
        out["requests"] = list(requests)
    return out


def claim_config(requests: Sequence[str], driver: str, attribute: str) -> J:
    out: J = opaque(driver, attribute)
    if requests:
        out["requests"] = list(requests)
    return out


# --------------------------------------------------------------------------------------- expected answers


def res(
    request: str,
    driver: str,
    pool: str,
    device: str,
    *,
    admin: bool = False,
    tolerations: Sequence[J] = (),
    share: bool = False,
    consumed: Mapping[str, str] | None = None,
    binding: tuple[list[str], list[str]] | None = None,
) -> J:
    """One expected device result. ``share`` expects a shareID (any)."""
    out: J = {"request": request, "driver": driver, "pool": pool, "device": device}
    if admin:
        out["adminAccess"] = True
    if tolerations:
        out["tolerations"] = list(tolerations)
    if share:
        out["shareID"] = SHARE_ID
    if consumed:
        out["consumedCapacity"] = dict(consumed)
    if binding is not None:
        out["bindingConditions"], out["bindingFailureConditions"] = binding
    return out


def many(request: str, driver: str, pool: str, count: int, start: int = 0) -> list[J]:
    """``device-<start>`` … results (upstream ``multipleDeviceAllocationResults``)."""
    return [res(request, driver, pool, f"device-{n}") for n in range(start, start + count)]


SHARE_ID = "<any share id>"


@dataclass(frozen=True)
class Allocation:
    """One claim's expected ``status.allocation``."""

    node_selector: J | None
    results: tuple[J, ...]
    config: tuple[J, ...] = ()
    #: compare results in order (upstream compared a whole struct, not a ConsistOf)
    ordered: bool = False


def alloc(
    node_selector: J | None, *results: J, config: Sequence[J] = (), ordered: bool = False
) -> Allocation:
    return Allocation(node_selector, tuple(results), tuple(config), ordered)


def from_class(driver: str, attribute: str, *requests: str) -> J:
    out: J = {"source": "FromClass", **opaque(driver, attribute)}
    if requests:
        out["requests"] = list(requests)
    return out


def from_claim(driver: str, attribute: str, *requests: str) -> J:
    out: J = {"source": "FromClaim", **opaque(driver, attribute)}
    if requests:
        out["requests"] = list(requests)
    return out


@dataclass(frozen=True)
class Error:
    """An `AllocationError` containing upstream's text; ``node_local`` for errors upstream wraps in
    ``ErrFailedAllocationOnNode`` (allocation may still succeed on another node)."""

    substring: str
    node_local: bool = False


UNSCHEDULABLE = None
Expect = list[Allocation] | Error | None


@dataclass(frozen=True)
class Ported:
    """One upstream case in our words. ``expect`` is upstream's answer; ``ours`` our answer where it
    differs on purpose (``differs`` says why), else None."""

    name: str
    upstream: str
    claims: Sequence[J] = ()
    classes: Sequence[J] = (CLASS_A_OBJ,)
    slices: Sequence[J] = ()
    node: J = field(default_factory=lambda: NODE_1_OBJ)
    features: frozenset[str] = frozenset()
    #: (driver, pool, device) held exclusively by some other claim
    allocated: Sequence[tuple[str, str, str]] = ()
    #: (driver, pool, device) -> capacity consumed by a shared allocation elsewhere
    shared: Mapping[tuple[str, str, str], Mapping[str, str]] = field(default_factory=dict)
    expect: Expect = None
    #: upstream's NumAllocateOneInvocations for its incubating allocator, if the case states it
    steps: int | None = None
    ours: Expect = None
    differs: str = ""


def features(*names: str) -> frozenset[str]:
    return frozenset(names)


# --------------------------------------------------------------------------------------- running a case


@dataclass(frozen=True)
class Outcome:
    results: list[J] | None = None
    #: what `allocate` raised: an `AllocationError`, or anything else (a crash, never upstream's answer)
    error: Exception | None = None
    steps: int = 0


def allocated_claims(case: Ported) -> list[J]:
    """The case's in-use devices as allocated claims (upstream passes device IDs directly)."""
    out: list[J] = []
    if case.allocated:
        out.append(
            {
                "metadata": {"name": "in-use", "namespace": "elsewhere"},
                "status": {
                    "allocation": {
                        "devices": {
                            "results": [
                                {"request": "r", "driver": d, "pool": p, "device": n}
                                for d, p, n in case.allocated
                            ]
                        }
                    }
                },
            }
        )
    for n, ((d, p, name), consumed) in enumerate(case.shared.items()):
        result = {
            "request": "r",
            "driver": d,
            "pool": p,
            "device": name,
            "shareID": f"00000000-0000-4000-9000-{n:012d}",
            "consumedCapacity": dict(consumed),
        }
        out.append(
            {
                "metadata": {"name": f"sharing-{n}", "namespace": "elsewhere"},
                "status": {"allocation": {"devices": {"results": [result]}}},
            }
        )
    return out


def run(case: Ported) -> Outcome:
    counter = itertools.count(1)
    allocator = Allocator(
        classes=case.classes,
        slices=case.slices,
        allocated_claims=allocated_claims(case),
        features=case.features,
        id_factory=lambda: f"00000000-0000-4000-8000-{next(counter):012d}",
        clock=lambda: NOW,
    )
    try:
        results = allocator.allocate(case.node, list(case.claims))
    except Exception as exc:  # noqa: BLE001 - a crash is an answer too, and never upstream's
        return Outcome(error=exc, steps=allocator.search_steps)
    return Outcome(results=results, steps=allocator.search_steps)


def _canonical(value: Any) -> Any:
    """Order-free, empty-free form of a JSON value for comparison."""
    if isinstance(value, Mapping):
        return tuple(
            sorted(
                (k, _canonical(x))
                for k, x in value.items()
                if x not in (None, [], {}) and k != "allocationTimestamp"
            )
        )
    if isinstance(value, list | tuple):
        return tuple(sorted((_canonical(x) for x in value), key=repr))
    return value


def _result_key(result: Mapping[str, Any]) -> Any:
    out = dict(result)
    if "shareID" in out:
        out["shareID"] = SHARE_ID
    if out.get("consumedCapacity"):
        out["consumedCapacity"] = {
            k: Quantity.parse(str(q)).nano_value() for k, q in out["consumedCapacity"].items()
        }
    return _canonical(out)


def _allocation_key(allocation: Mapping[str, Any], ordered: bool) -> Any:
    devices = allocation.get("devices") or {}
    results = [_result_key(r) for r in devices.get("results") or []]
    return (
        tuple(results) if ordered else tuple(sorted(results, key=repr)),
        tuple(_canonical(c) for c in devices.get("config") or []),
        _canonical(allocation.get("nodeSelector")),
    )


def _expected_key(a: Allocation) -> Any:
    results = [_result_key(r) for r in a.results]
    return (
        tuple(results) if a.ordered else tuple(sorted(results, key=repr)),
        tuple(_canonical(c) for c in a.config),
        _canonical(a.node_selector),
    )


def verdict(expect: Expect, outcome: Outcome) -> str:
    """ "" when the outcome is the expected answer, else what differs."""
    if isinstance(expect, Error):
        if outcome.error is None:
            return f"expected an error containing {expect.substring!r}, got {outcome.results!r}"
        text = str(outcome.error)
        if not isinstance(outcome.error, AllocationError):
            return f"crashed with {type(outcome.error).__name__}: {text}"
        if expect.substring not in text:
            return f"expected an error containing {expect.substring!r}, got {text!r}"
        if expect.node_local != outcome.error.node_local:
            return f"expected node_local={expect.node_local}, got {outcome.error.node_local} ({text})"
        return ""
    if outcome.error is not None:
        return f"unexpected {type(outcome.error).__name__}: {outcome.error}"
    got = outcome.results
    if not expect:
        # Upstream cannot tell an empty list from nil here (ConsistOf()): no claims, or none fit.
        return "" if not got else f"expected nothing, got {got!r}"
    if got is None:
        return "expected results, got unschedulable"
    if len(got) != len(expect):
        return f"expected {len(expect)} allocations, got {len(got)}"
    for n, (want, have) in enumerate(zip(expect, got, strict=True)):
        if _expected_key(want) != _allocation_key(have, want.ordered):
            return f"claim #{n}: expected {want!r}, got {have!r}"
    return ""


def check(case: Ported) -> None:
    """The test body: our answer (upstream's unless the case documents a deliberate difference)."""
    outcome = run(case)
    problem = verdict(case.ours if case.differs else case.expect, outcome)
    assert not problem, problem
    if case.steps is not None and not case.differs:
        assert outcome.steps == case.steps, (
            f"upstream takes {case.steps} search steps, we took {outcome.steps}"
        )


def case_ids(cases: Sequence[Ported]) -> list[str]:
    return [c.name for c in cases]
