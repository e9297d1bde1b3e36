"""Why each device on a node can or cannot serve each request of a claim (for what-if)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .allocator import Allocator
from .constraints import constrained_attribute, lookup_attribute
from .errors import AllocationError
from .features import DEFAULT_FEATURES
from .groups import conflict
from .model import Attr, Device, Json, PreparedClaim, node_matches, parse_node, prepare_claim
from .plan import Candidate, RequestData
from .pools import Pool, slice_targets_node
from .search import Search
from .selectors import SelectorBackend
from .state import AllocatedState

_IGNORED = (
    "its slice declares compatibilityGroups, which are ignored (with the slice) while the"
    " DeviceCompatibilityGroups feature is off"
)

USABLE = "usable"
POOL_INCOMPLETE = "pool incomplete"
POOL_INVALID = "pool invalid"
NODE_MISMATCH = "node mismatch"
BINDING_UNSUPPORTED = "binding conditions not supported"
NODE_OPERATIONS_UNSUPPORTED = "node operations not supported"
CLASS_SELECTOR_FALSE = "class selector false"
REQUEST_SELECTOR_FALSE = "request selector false"
SELECTOR_ERROR = "selector error"
DERIVED_ATTRIBUTE_ERROR = "derived attribute error"
ALREADY_IN_USE = "already in use"
TAINT_NOT_TOLERATED = "taint not tolerated"
COUNTERS_EXHAUSTED = "counters exhausted"
INCOMPATIBLE_GROUPS = "incompatible groups"
CAPACITY_SHORT = "capacity short"
CONSTRAINT_UNMET = "constraint unmet"

REASONS = (
    USABLE,
    POOL_INCOMPLETE,
    POOL_INVALID,
    NODE_MISMATCH,
    BINDING_UNSUPPORTED,
    NODE_OPERATIONS_UNSUPPORTED,
    CLASS_SELECTOR_FALSE,
    REQUEST_SELECTOR_FALSE,
    SELECTOR_ERROR,
    DERIVED_ATTRIBUTE_ERROR,
    ALREADY_IN_USE,
    TAINT_NOT_TOLERATED,
    COUNTERS_EXHAUSTED,
    INCOMPATIBLE_GROUPS,
    CAPACITY_SHORT,
    CONSTRAINT_UNMET,
)


@dataclass(frozen=True, slots=True)
class DeviceVerdict:
    driver: str
    pool: str
    device: str
    #: "req" or "req/sub"
    request: str
    #: one of `REASONS`
    reason: str
    #: human-readable specifics: the selector, the taint and its source, the claims holding it …
    detail: str = ""


def _device_rows(alloc: Allocator, pool: Pool, node: Any) -> Iterable[tuple[Candidate, bool]]:
    for s in pool.slices:
        for d in s.devices:
            on_node = not s.per_device or node_matches(
                node, d.node_name, d.all_nodes, d.node_selector, f"ResourceSlice {s.name} device {d.name}"
            )
            yield Candidate(d, s, pool), on_node


def _constraint_name(is_match: bool, attribute: str) -> str:
    return f"{'matchAttribute' if is_match else 'distinctAttribute'} {attribute}"


def _show_derived(values: dict[str, Attr]) -> str:
    return "; ".join(f"derived attribute {name}: {attr[1]!r}" for name, attr in values.items())


def _with_derived(detail: str, values: dict[str, Attr] | None) -> str:
    if not values:
        return detail
    return f"{detail}; {_show_derived(values)}" if detail else _show_derived(values)


def _verdict(run: Search, rd: RequestData, cand: Candidate, on_node: bool) -> tuple[str, str]:
    a = run.a
    pool, device = cand.pool, cand.device
    if pool.incomplete:
        return POOL_INCOMPLETE, "not all ResourceSlices of the pool's newest generation are published"
    if pool.invalid is not None:
        return POOL_INVALID, pool.invalid
    if not on_node:
        return NODE_MISMATCH, "the device's own node selection excludes this node"
    if device.binding_conditions and not a.binding:
        return BINDING_UNSUPPORTED, "the DeviceBindingAndStatus feature is off"
    if device.skip_node_operations and not a.node_operations:
        return (
            NODE_OPERATIONS_UNSUPPORTED,
            "the slice sets skipNodeOperations and the OptionalNodeOperations feature is off",
        )
    try:
        cls = rd.device_class
        for i, expr in enumerate(cls.selectors):
            if not a.selector_matches(expr, device, f"class {cls.name}", i):
                return CLASS_SELECTOR_FALSE, f"class {cls.name} selector #{i}: {expr}"
        for i, expr in enumerate(rd.spec.selectors):
            if not a.selector_matches(expr, device, rd.where, i):
                return REQUEST_SELECTOR_FALSE, f"selector #{i}: {expr}"
    except AllocationError as exc:
        return SELECTOR_ERROR, str(exc)
    derived = None
    if rd.spec.derived:
        try:
            derived = a.derived_values(rd, device)
        except AllocationError as exc:
            return DERIVED_ATTRIBUTE_ERROR, str(exc)
    holders = a.state.exclusive.get(device.key)
    if holders and not rd.admin:
        return ALREADY_IN_USE, "allocated to " + ", ".join(holders)
    taint = run.taint_blocks(rd, device)
    if taint is not None:
        return TAINT_NOT_TOLERATED, f"{taint.key}={taint.value}:{taint.effect} from {taint.origin}"
    multi = a.consumable_capacity and device.allow_multiple
    if device.consumes_counters:
        if not a.partitionable:
            return COUNTERS_EXHAUSTED, "the PartitionableDevices feature is off"
        if not (multi and device.key in a.state.capacity):
            avail = a.available_counters(pool)
            for cc in device.consumes_counters:
                for name, v in cc.counters.items():
                    left = avail.get((cc.counter_set, name))
                    if left is not None and left < v:
                        return COUNTERS_EXHAUSTED, f"counter {cc.counter_set}/{name}: needs {v}, {left} left"
        if a.compatibility_groups and pool.uses_groups:
            why = conflict(device, a.group_baseline(pool))
            if why is not None:
                return INCOMPATIBLE_GROUPS, why
    if a.consumable_capacity and not run.capacity_ok(rd, cand):
        return CAPACITY_SHORT, "requested capacity does not fit (or breaks the device's request policy)"
    for i in rd.constraint_ids:
        is_match, attribute = run.plans[0].constraints[i]
        if constrained_attribute(device, attribute, derived) is None:
            return (
                CONSTRAINT_UNMET,
                _with_derived(
                    f"{_constraint_name(is_match, attribute)}: the device does not have the attribute",
                    derived,
                ),
            )
    return USABLE, _with_derived("", derived)


def explain(
    *,
    classes: Iterable[Json],
    slices: Iterable[Json],
    allocated_claims: Iterable[Json],
    claim: Json | PreparedClaim,
    node: Json | None = None,
    taint_rules: Iterable[Json] = (),
    features: Iterable[str] = DEFAULT_FEATURES,
    backend: SelectorBackend | None = None,
    allocator: Allocator | None = None,
) -> list[DeviceVerdict]:
    """One verdict per (device reachable from the node, request or subrequest of the claim).

    Devices come in allocation order; requests in claim order. Checks run in the order the
    allocator applies them and the first failing one is reported. ``constraint unmet`` says
    the device lacks a constrained attribute, or (matchAttribute) too few usable devices
    share its value for some constrained request; whether a whole combination satisfies
    the constraints is what `allocate` answers. CEL errors become ``selector error`` verdicts
    instead of aborting. Invalid input still raises `AllocationError`.
    """
    alloc = allocator or Allocator(
        classes=classes,
        slices=slices,
        state=AllocatedState.from_claims(allocated_claims),
        taint_rules=taint_rules,
        features=features,
        backend=backend,
    )
    prepared = claim if isinstance(claim, PreparedClaim) else prepare_claim(claim)
    node_obj = parse_node(node)
    view = alloc.node_view(node_obj)
    run = Search(alloc, view, [alloc.plan(prepared)], [prepared])
    datas = [rd for per_request in run.requests[0] for rd in per_request]
    rows: list[tuple[Candidate, RequestData, str, str]] = []
    for pool in view.pools:
        for cand, on_node in _device_rows(alloc, pool, node_obj):
            for rd in datas:
                reason, detail = _verdict(run, rd, cand, on_node)
                rows.append((cand, rd, reason, detail))
    rows = _match_attribute_shortfalls(run, datas, rows)
    ignored = [s for s in alloc.ignored_slices if slice_targets_node(s, node_obj, alloc.partitionable)]
    for s in sorted(ignored, key=lambda s: (s.driver, s.pool, s.name)):
        for d in s.devices:
            for rd in datas:
                rows.append(
                    (Candidate(d, s, Pool(s.driver, s.pool, incomplete=True)), rd, POOL_INCOMPLETE, _IGNORED)
                )
    return [
        DeviceVerdict(c.device.driver, c.device.pool, c.device.name, rd.name, reason, detail)
        for c, rd, reason, detail in rows
    ]


def _enough(counts: dict[int, dict[Any, int]], rd: RequestData, value: Any) -> bool:
    """Unconstrained requests always have enough; constrained ones need `num_devices`."""
    return id(rd) not in counts or counts[id(rd)].get(value, 0) >= rd.num_devices


def _derived_of(run: Search, rd: RequestData, device: Device) -> dict[str, Attr] | None:
    """Derived values of a usable device (already evaluated by `_verdict`, so no error here)."""
    return run.a.derived_values(rd, device) if rd.spec.derived else None


def _match_attribute_shortfalls(
    run: Search, datas: list[RequestData], rows: list[tuple[Candidate, RequestData, str, str]]
) -> list[tuple[Candidate, RequestData, str, str]]:
    """Mark usable devices whose matchAttribute value too few usable devices share.

    All devices of the constrained requests carry one common value, so a value that fewer
    usable devices have than a constrained request needs cannot be it (a necessary
    condition only: devices wanted by two requests are not counted twice).
    """
    lists = run.a.list_attributes
    for index, (is_match, attribute) in enumerate(run.plans[0].constraints):
        if not is_match:
            continue
        constrained = [rd for rd in datas if index in rd.constraint_ids and not rd.all_mode]
        counts: dict[int, dict[Any, int]] = {id(rd): {} for rd in constrained}
        for cand, rd, reason, _ in rows:
            if reason == USABLE and id(rd) in counts:
                attr = lookup_attribute(cand.device, attribute, lists, _derived_of(run, rd, cand.device))
                if attr is not None and attr[0] in ("int", "bool", "string", "version"):
                    counts[id(rd)][attr] = counts[id(rd)].get(attr, 0) + 1
        alternatives: dict[str, list[RequestData]] = {}
        for rd in datas:
            alternatives.setdefault(rd.parent or rd.name, []).append(rd)

        for i, (cand, rd, reason, _) in enumerate(rows):
            if reason != USABLE or id(rd) not in counts:
                continue
            derived = _derived_of(run, rd, cand.device)
            attr = lookup_attribute(cand.device, attribute, lists, derived)
            if attr is None or attr[0] not in ("int", "bool", "string", "version"):
                continue
            short = [] if _enough(counts, rd, attr) else [rd.name]
            for base, alts in alternatives.items():
                if base != (rd.parent or rd.name) and not any(_enough(counts, alt, attr) for alt in alts):
                    short.append(base)
            if short:
                rows[i] = (
                    cand,
                    rd,
                    CONSTRAINT_UNMET,
                    _with_derived(
                        f"matchAttribute {attribute}: too few usable devices with value {attr[1]!r} for "
                        + ", ".join(short),
                        derived,
                    ),
                )
    return rows


@dataclass(frozen=True, slots=True)
class RequestSummary:
    """How many devices one request (or subrequest) needs and how many could serve it."""

    request: str
    #: devices asked for; None for allocationMode All (every matching device)
    needed: int | None
    usable: int
    #: reason -> number of devices, for the devices that cannot serve it
    blocked: dict[str, int]
    #: one sentence for people
    message: str


def summarize(claim: Json | PreparedClaim, verdicts: Iterable[DeviceVerdict]) -> list[RequestSummary]:
    """Per request or subrequest, in claim order, from `explain`'s verdicts.

    Enough usable devices for every request while `allocate` still says no means the
    devices cannot be combined: constraints, counters or capacity shared between requests,
    or devices wanted by several requests.
    """
    prepared = claim if isinstance(claim, PreparedClaim) else prepare_claim(claim)
    by_request: dict[str, list[DeviceVerdict]] = {}
    for v in verdicts:
        by_request.setdefault(v.request, []).append(v)
    out = []
    for request in prepared.requests:
        specs = [(request.name, request.exact)] if request.exact is not None else []
        specs += [(f"{request.name}/{s.name}", s) for s in request.first_available]
        for name, spec in specs:
            assert spec is not None
            rows = by_request.get(name, [])
            usable = sum(1 for v in rows if v.reason == USABLE)
            blocked: dict[str, int] = {}
            for v in rows:
                if v.reason != USABLE:
                    blocked[v.reason] = blocked.get(v.reason, 0) + 1
            needed = spec.count if spec.mode == "ExactCount" else None
            why = ", ".join(f"{n} {reason}" for reason, n in sorted(blocked.items(), key=lambda kv: -kv[1]))
            if needed is None:
                text = f"{name}: asks for all matching devices; {usable} usable"
            elif usable >= needed:
                text = f"{name}: needs {needed}, {usable} usable"
            else:
                text = f"{name}: needs {needed}, only {usable} usable"
            out.append(RequestSummary(name, needed, usable, blocked, f"{text} ({why})" if why else text))
    return out
