"""Node allocatable resources claimed through DRA (DRANodeAllocatableResources, alpha; KEP-5517).

A device may say what it costs its node in ordinary resources (``cpu``, ``memory``, hugepages …):
``device.nodeAllocatableResources[<resource>]`` holds a ``mapping`` (the device *is* that resource:
``capacityKey`` × ``capacityMultiplier`` of the capacity the allocation consumed, or
``deviceMultiplier`` per allocated device) and/or an ``overhead`` (auxiliary cost: ``perPod`` once
per pod using the claim, ``perContainer`` per container referencing it). The scheduler writes the
outcome per claim into ``pod.status.nodeAllocatableResourceClaimStatuses`` and accounts it against
the node's allocatable; `claim_statuses` computes those entries and `dra_requests` the total:

* a mapping counts once per claim (however many containers use it); overhead counts per pod, so a
  claim shared by two pods costs each of them its overhead;
* ``perContainer`` counts every container of the pod that lists the claim in
  ``resources.claims`` (``containers`` in the status); for init containers that run to completion
  only the largest one counts, as for ordinary requests (they run one at a time, before the
  others); a claim no container references still counts its mapping and ``perPod``;
* ``capacityKey`` reads ``consumedCapacity`` of the allocation result; a device allocated whole
  (no ``consumedCapacity``) consumes its full capacity value.

Not here: pod-level resources (``pod.spec.resources``), which replace the sum when set, and the
ordinary container requests the scheduler adds to this; both are the caller's. Upstream's scheduler
code for this was not available; this follows the 1.37 API documentation and the KEP.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from dra.objects import allocation_results, pool_generation, pool_id
from dra.quantity import Quantity, QuantityError

JSON = dict[str, Any]

_NANO = 10**9


class NodeAllocatableError(ValueError):
    """A quantity in a device's ``nodeAllocatableResources`` or a result that cannot be read."""


def _quantity(value: object, field: str) -> Quantity:
    try:
        return Quantity.parse(str(value).strip())
    except QuantityError as exc:
        raise NodeAllocatableError(f"{field}: {exc}") from None


def _times(base: Quantity, factor: Quantity) -> Quantity:
    """Exact product, rounded up to whole nanos, in the base's format."""
    product = Fraction(base.nano_value()) * Fraction(factor.nano_value(), _NANO)
    return Quantity(-(-product.numerator // product.denominator), base.format)


def _devices(slices: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """Devices by (driver, pool, name), from the newest generation of each pool."""
    newest: dict[tuple[str, str], int] = {}
    slices = list(slices)
    for s in slices:
        pid = pool_id(s)
        newest[pid] = max(newest.get(pid, pool_generation(s)), pool_generation(s))
    out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for s in slices:
        driver, pool = pool_id(s)
        if pool_generation(s) != newest[(driver, pool)]:
            continue
        for d in (s.get("spec") or {}).get("devices") or ():
            out[(driver, pool, str(d.get("name")))] = d
    return out


def _pod_claim_names(pod: Mapping[str, Any]) -> dict[str, str]:
    """Pod claim entry name -> ResourceClaim name (direct, or generated from a template)."""
    generated = {
        str(s.get("name")): s.get("resourceClaimName")
        for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
    }
    out: dict[str, str] = {}
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        name = str(entry.get("name"))
        claim = entry.get("resourceClaimName") or generated.get(name)
        if claim:
            out[name] = str(claim)
    return out


def _referencing(containers: Iterable[Mapping[str, Any]], entry: str) -> list[str]:
    return [
        str(c.get("name"))
        for c in containers
        if any(ref.get("name") == entry for ref in (c.get("resources") or {}).get("claims") or ())
    ]


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def _claim_amounts(
    claim: Mapping[str, Any], devices: Mapping[tuple[str, str, str], Mapping[str, Any]]
) -> tuple[dict[str, Quantity], dict[str, dict[str, Quantity]]]:
    """(mapping per resource, overhead per resource: {"perPod": q, "perContainer": q}) of one claim."""
    ref = (claim.get("metadata") or {}).get("name")
    mapping: dict[str, Quantity] = {}
    overhead: dict[str, dict[str, Quantity]] = {}
    for i, result in enumerate(allocation_results(claim)):
        key = (str(result.get("driver")), str(result.get("pool")), str(result.get("device")))
        device = devices.get(key)
        if device is None:
            continue  # the device is gone from the slices: nothing known about its cost
        field = f"device {'/'.join(key)}.nodeAllocatableResources"
        for resource, spec in (device.get("nodeAllocatableResources") or {}).items():
            m = spec.get("mapping") or {}
            amount: Quantity | None = None
            if m.get("capacityKey"):
                cap_key = str(m["capacityKey"])
                consumed = (result.get("consumedCapacity") or {}).get(cap_key)
                if consumed is None:
                    consumed = ((device.get("capacity") or {}).get(cap_key) or {}).get("value")
                if consumed is not None and m.get("capacityMultiplier") is not None:
                    where = f"claim {ref} result {i}"
                    amount = _times(
                        _quantity(consumed, f"{where}.consumedCapacity[{cap_key}]"),
                        _quantity(m["capacityMultiplier"], f"{field}[{resource}].mapping.capacityMultiplier"),
                    )
            elif m.get("deviceMultiplier") is not None:
                amount = _quantity(m["deviceMultiplier"], f"{field}[{resource}].mapping.deviceMultiplier")
            if amount is not None:
                mapping[resource] = mapping[resource] + amount if resource in mapping else amount
            o = spec.get("overhead") or {}
            for part in ("perPod", "perContainer"):
                if o.get(part) is not None:
                    q = _quantity(o[part], f"{field}[{resource}].overhead.{part}")
                    slot = overhead.setdefault(resource, {})
                    slot[part] = slot[part] + q if part in slot else q
    return mapping, overhead


def claim_statuses(
    *, pod: Mapping[str, Any], claims: Iterable[Mapping[str, Any]], slices: Iterable[Mapping[str, Any]]
) -> list[JSON]:
    """``pod.status.nodeAllocatableResourceClaimStatuses`` for the pod's allocated claims, in the
    order of ``pod.spec.resourceClaims``; claims whose devices cost nothing get no entry."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    by_name = {
        str((c.get("metadata") or {}).get("name")): c
        for c in claims
        if ((c.get("metadata") or {}).get("namespace") or "") == namespace
    }
    devices = _devices(slices)
    spec = pod.get("spec") or {}
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    out: list[JSON] = []
    for entry, claim_name in _pod_claim_names(pod).items():
        claim = by_name.get(claim_name)
        if claim is None:
            continue
        mapping, overhead = _claim_amounts(claim, devices)
        if not mapping and not overhead:
            continue
        status: JSON = {"resourceClaimName": claim_name}
        users = _referencing(containers, entry)
        if users:
            status["containers"] = users
        if mapping:
            status["mapping"] = [{"name": r, "quantity": str(q)} for r, q in sorted(mapping.items())]
        if overhead:
            status["overhead"] = [
                {"name": r, **{part: str(q) for part, q in parts.items()}}
                for r, parts in sorted(overhead.items())
            ]
        out.append(status)
    return out


def dra_requests(*, pod: Mapping[str, Any], statuses: Iterable[Mapping[str, Any]]) -> dict[str, Quantity]:
    """What the pod's DRA devices account against node allocatable, per resource, from its
    `claim_statuses` (or the ones the scheduler wrote): mappings and ``perPod`` once per claim,
    plus ``perContainer`` for the long-running containers referencing each claim, or for the init
    container that runs to completion with the largest share if that is more (init containers run
    one at a time, before the others start)."""
    spec = pod.get("spec") or {}
    run_to_completion = {str(c.get("name")) for c in spec.get("initContainers") or () if not _is_sidecar(c)}
    fixed: dict[str, Quantity] = {}
    long_running: dict[str, Quantity] = {}
    per_init: dict[str, dict[str, Quantity]] = {}
    for status in statuses:
        users = [str(c) for c in status.get("containers") or ()]
        steady = sum(1 for c in users if c not in run_to_completion)
        for m in status.get("mapping") or ():
            _add(fixed, str(m["name"]), _quantity(m["quantity"], "mapping.quantity"))
        for o in status.get("overhead") or ():
            resource = str(o["name"])
            if o.get("perPod") is not None:
                _add(fixed, resource, _quantity(o["perPod"], "overhead.perPod"))
            if o.get("perContainer") is None:
                continue
            each = _quantity(o["perContainer"], "overhead.perContainer")
            if steady:
                _add(long_running, resource, each.mul(steady))
            for c in users:
                if c in run_to_completion:
                    _add(per_init.setdefault(c, {}), resource, each)
    total = dict(fixed)
    for resource in {*long_running, *(r for amounts in per_init.values() for r in amounts)}:
        shares = [long_running[resource]] if resource in long_running else []
        shares.extend(amounts[resource] for amounts in per_init.values() if resource in amounts)
        _add(total, resource, max(shares))
    return total


def _add(into: dict[str, Quantity], resource: str, q: Quantity) -> None:
    into[resource] = into[resource] + q if resource in into else q
