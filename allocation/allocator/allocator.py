"""The structured allocator: per-node, first-fit, depth-first search with backtracking."""

from __future__ import annotations

import sys
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from .capacity import capacity_fits, consumed_capacity
from .constraints import Constraint, DistinctAttribute, MatchAttribute
from .errors import AllocationError
from .features import normalize_features
from .model import (
    BLOCKING_EFFECTS,
    RESULTS_MAX,
    Device,
    DeviceClass,
    Json,
    Node,
    PreparedClaim,
    RequestSpec,
    Slice,
    Taint,
    node_matches,
    parse_class,
    parse_node,
    parse_slice,
    parse_taint_rule,
    prepare_claim,
)
from .pools import Pool, PoolID, gather_pools
from .quantity import Qty
from .selectors import SelectorBackend, default_backend
from .state import AllocatedState


class _MaxSizeExceeded(Exception):
    """More than 32 results would be needed; lets callers backtrack aggressively."""


@dataclass(eq=False, slots=True)
class Candidate:
    device: Device
    slice: Slice
    pool: Pool


@dataclass(eq=False, slots=True)
class NodeView:
    """Pools of one node, computed once per node and reused while the slices stay the same."""

    node: Node | None
    pools: list[Pool]
    #: devices of usable pools in search order (pool, slice, device); per-device node
    #: selection already applied
    candidates: list[Candidate]
    #: the same, per pool (index into `pools`)
    pool_candidates: list[list[Candidate]]
    #: device keys of `candidates`
    keys: list[str]
    #: some candidate may be shared (allowMultipleAllocations with ConsumableCapacity)
    has_multi: bool
    #: `AllocatedState.releases` when every candidate was last seen in use (-1: never)
    full_since: int = -1


@dataclass(eq=False, slots=True)
class RequestData:
    """A validated request or subrequest; cached per claim, independent of node and call."""

    spec: RequestSpec
    device_class: DeviceClass
    #: name in results: "req" or "req/sub"
    name: str
    parent: str | None
    #: claim reference for error messages
    where: str
    num_devices: int
    all_mode: bool
    admin: bool
    #: indices into the claim's constraints that apply to this request
    constraint_ids: tuple[int, ...]
    #: device key -> class and request selectors all true (static: slices do not change)
    selectable_cache: dict[str, bool] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class ClaimPlan:
    """Everything about a claim that does not depend on the node: validated once."""

    claim: PreparedClaim
    requests: list[list[RequestData]]
    has_sub: list[bool]
    #: (is matchAttribute, attribute) per constraint
    constraints: list[tuple[bool, str]]
    #: lower bound of devices (All requests count as one)
    min_devices: int
    #: no adminAccess and no All request: a node with fewer free devices cannot fit it
    simple: bool
    has_all: bool


@dataclass(slots=True)
class DeviceResult:
    request: RequestData
    candidate: Candidate
    share_id: str | None
    consumed: dict[str, Qty] | None


_CLAIM_CACHE_SIZE = 256


def _default_clock() -> datetime:
    return datetime.now(UTC)


class Allocator:
    """Reusable allocator over fixed classes, slices and taint rules (upstream ``NewAllocator``).

    ``state`` is read on every call; keep it current with `AllocatedState.add_claim` /
    `remove_claim` between calls (only through those methods). Pools per node, compiled CEL,
    selector results per (expression, device), claim validation and conversion (per
    `PreparedClaim`, and for the last 256 claim dicts passed in) are cached, so do not mutate
    input dicts while the allocator is in use. A node found with every device in use is
    rejected in O(1) until the next `remove_claim`.
    """

    def __init__(
        self,
        *,
        classes: Iterable[Json],
        slices: Iterable[Json],
        state: AllocatedState | None = None,
        allocated_claims: Iterable[Json] = (),
        taint_rules: Iterable[Json] = (),
        features: Iterable[str] = frozenset(),
        backend: SelectorBackend | None = None,
        id_factory: Callable[[], str] | None = None,
        clock: Callable[[], datetime] | None = None,
        max_search_steps: int | None = None,
    ) -> None:
        #: abort one `allocate` call with `AllocationError` after this many search steps
        #: (None: no limit); the deterministic stand-in for upstream's filter timeout
        self.max_search_steps = max_search_steps
        self.features = normalize_features(features)
        f = self.features
        self.admin_access = "AdminAccess" in f
        self.prioritized_list = "PrioritizedList" in f
        self.partitionable = "PartitionableDevices" in f
        self.device_taints = "DeviceTaints" in f
        self.consumable_capacity = "ConsumableCapacity" in f
        self.binding = "DeviceBindingAndStatus" in f
        self.list_attributes = "ListTypeAttributes" in f
        rules = (
            tuple(parse_taint_rule(r) for r in taint_rules)
            if self.device_taints and "DeviceTaintRules" in f
            else ()
        )
        self.slices: list[Slice] = [parse_slice(s, rules) for s in slices]
        self.classes: dict[str, DeviceClass] = {}
        for raw in classes:
            cls = parse_class(raw)
            self.classes[cls.name] = cls
        self.state = state if state is not None else AllocatedState.from_claims(allocated_claims)
        self._backend = backend
        self.id_factory = id_factory or (lambda: str(uuid.uuid4()))
        self.clock = clock or _default_clock

        self._slices_on_node: dict[str, list[Slice]] = {}
        self._slices_shared: list[Slice] = []
        self._slices_by_pool: dict[PoolID, list[Slice]] = {}
        for s in self.slices:
            if s.node_name:
                self._slices_on_node.setdefault(s.node_name, []).append(s)
            else:
                self._slices_shared.append(s)
            self._slices_by_pool.setdefault((s.driver, s.pool), []).append(s)

        self._views: dict[str | None, NodeView] = {}
        self._compiled: dict[str, Any] = {}
        self._inputs: dict[str, Any] = {}
        #: expression -> device key -> result
        self._selector_results: dict[str, dict[str, bool]] = {}
        self._blocking: dict[str, tuple[Taint, ...]] = {}
        #: search steps taken over all calls (upstream's NumAllocateOneInvocations statistic)
        self.search_steps = 0
        #: identifies this allocator in `PreparedClaim.plans` without keeping it alive
        self._token = object()
        self._claim_dicts: OrderedDict[int, tuple[Json, PreparedClaim]] = OrderedDict()
        self._counters_version = -1
        self._available_counters: dict[PoolID, dict[tuple[str, str], Fraction]] = {}

    # ------------------------------------------------------------------ caches

    @property
    def backend(self) -> SelectorBackend:
        if self._backend is None:
            self._backend = default_backend()
        return self._backend

    def node_view(self, node: Node | None) -> NodeView:
        name = node.name if node is not None else None
        view = self._views.get(name)
        if view is not None and view.node == node:
            return view
        candidate_slices = (
            [*self._slices_on_node.get(name, ()), *self._slices_shared] if name else self._slices_shared
        )
        pools = gather_pools(node, candidate_slices, self._slices_by_pool, self.partitionable)
        candidates: list[Candidate] = []
        per_pool: list[list[Candidate]] = []
        for pool in pools:
            mine: list[Candidate] = []
            if pool.usable:
                for s in pool.slices:
                    for d in s.devices:
                        if s.per_device and not node_matches(
                            node,
                            d.node_name,
                            d.all_nodes,
                            d.node_selector,
                            f"ResourceSlice {s.name} device {d.name}",
                        ):
                            continue
                        mine.append(Candidate(d, s, pool))
            per_pool.append(mine)
            candidates.extend(mine)
        has_multi = self.consumable_capacity and any(c.device.allow_multiple for c in candidates)
        view = NodeView(node, pools, candidates, per_pool, [c.device.key for c in candidates], has_multi)
        self._views[name] = view
        return view

    def blocking_taints(self, device: Device) -> tuple[Taint, ...]:
        taints = self._blocking.get(device.key)
        if taints is None:
            # Only NoSchedule and NoExecute block; None and unknown effects are informational.
            taints = (
                tuple(t for t in device.taints if t.effect in BLOCKING_EFFECTS) if self.device_taints else ()
            )
            self._blocking[device.key] = taints
        return taints

    def selector_matches(self, expr: str, device: Device, where: str, index: int) -> bool:
        results = self._selector_results.get(expr)
        if results is None:
            results = self._selector_results[expr] = {}
        hit = results.get(device.key)
        if hit is not None:
            return hit
        backend = self.backend
        compiled = self._compiled.get(expr)
        if compiled is None:
            try:
                compiled = backend.engine.compile(expr)
            except backend.errors as exc:
                raise AllocationError(f"{where}: selector #{index}: CEL compile error: {exc}") from exc
            self._compiled[expr] = compiled
        inp = self._inputs.get(device.key)
        if inp is None:
            inp = self._inputs[device.key] = backend.device_input(device.driver, device.raw)
        try:
            hit = bool(compiled.matches(inp))
        except backend.errors as exc:
            raise AllocationError(
                f"{where}: selector #{index} on device {device.key}: CEL runtime error: {exc}"
            ) from exc
        results[device.key] = hit
        return hit

    def available_counters(self, pool: Pool) -> dict[tuple[str, str], Fraction]:
        """Counters of the pool minus what allocated devices (on any node) consume."""
        if self._counters_version != self.state.version:
            self._available_counters.clear()
            self._counters_version = self.state.version
        avail = self._available_counters.get(pool.id)
        if avail is None:
            avail = {(cs, c): v for cs, counters in pool.counter_sets.items() for c, v in counters.items()}
            for s in pool.slices:
                self._subtract_allocated(avail, s.devices)
            self._subtract_allocated(avail, pool.other_devices)
            self._available_counters[pool.id] = avail
        return avail

    def _subtract_allocated(self, avail: dict[tuple[str, str], Fraction], devices: Iterable[Device]) -> None:
        for d in devices:
            if d.consumes_counters and self.state.is_allocated(d.key):
                for cc in d.consumes_counters:
                    for name, v in cc.counters.items():
                        k = (cc.counter_set, name)
                        if k in avail:
                            avail[k] -= v

    # ------------------------------------------------------------------ entry

    def allocate(
        self, node: Json | Node | None, claims: Sequence[Json | PreparedClaim]
    ) -> list[dict[str, Any]] | None:
        """One ``status.allocation`` per claim, or None if they do not fit together on the node."""
        view = self._view_for(node)
        plans = [self.plan(c if isinstance(c, PreparedClaim) else self._prepared(c)) for c in claims]
        if not view.has_multi and self._all_in_use(view, plans):
            return None
        return _Run(self, view, plans).execute()

    def _all_in_use(self, view: NodeView, plans: list[ClaimPlan]) -> bool:
        """Cheap rejection of full nodes, the common case when trying node after node.

        Exact, not a heuristic: when every device is in use and no request may share one
        (admin access, multi-allocatable devices), the search would skip each device at its
        first check, without evaluating any selector.
        """
        needed = 0
        for p in plans:
            if not p.simple:
                return False
            needed += p.min_devices
        if not needed:
            return False
        state = self.state
        if view.full_since == state.releases:
            return True  # nothing was released since: adding allocations cannot free devices
        exclusive = state.exclusive
        # A plain loop: measurably faster than all() over a generator on this hot path.
        for key in view.keys:  # noqa: SIM110
            if key not in exclusive:
                return False
        view.full_since = state.releases
        return True

    def _view_for(self, node: Json | Node | None) -> NodeView:
        if node is None or isinstance(node, Node):
            return self.node_view(node)
        meta = node.get("metadata") or {}
        # Compare labels every time: cheap, and safe if a caller updates node dicts in place.
        view = self._views.get(meta.get("name"))
        if view is None or view.node is None or view.node.labels != (meta.get("labels") or {}):
            view = self.node_view(parse_node(node))
        return view

    def _prepared(self, claim: Json) -> PreparedClaim:
        """Convert a claim dict, reusing the conversion while the same dict is passed again
        (a scheduler trying node after node); a small LRU keyed by identity."""
        known = self._claim_dicts.get(id(claim))
        if known is not None and known[0] is claim:
            self._claim_dicts.move_to_end(id(claim))
            return known[1]
        prepared = prepare_claim(claim)
        self._claim_dicts[id(claim)] = (claim, prepared)
        if len(self._claim_dicts) > _CLAIM_CACHE_SIZE:
            self._claim_dicts.popitem(last=False)
        return prepared

    def plan(self, claim: PreparedClaim) -> ClaimPlan:
        """Validate a claim against classes and features (cached on the claim, per allocator)."""
        plan = claim.plans.get(self._token)
        if plan is None:
            plan = claim.plans[self._token] = self._make_plan(claim)
        assert isinstance(plan, ClaimPlan)
        return plan

    def _make_plan(self, claim: PreparedClaim) -> ClaimPlan:
        constraints: list[tuple[bool, str]] = []
        for i, c in enumerate(claim.constraints):
            if c.match_attribute:
                constraints.append((True, c.match_attribute))
            else:
                if not self.consumable_capacity:
                    raise AllocationError(
                        f"claim {claim.ref}, constraint #{i}: distinctAttribute needs the ConsumableCapacity feature"
                    )
                assert c.distinct_attribute is not None
                constraints.append((False, c.distinct_attribute))
        requests: list[list[RequestData]] = []
        min_devices = 0
        for rname, specs, is_sub in requests_of(claim):
            if is_sub and not self.prioritized_list:
                raise AllocationError(
                    f"claim {claim.ref}, request {rname}: has subrequests, but the PrioritizedList feature is disabled"
                )
            datas = [self._request_data(claim, rname if is_sub else None, spec) for spec in specs]
            requests.append(datas)
            min_devices += min(1 if d.all_mode else d.num_devices for d in datas)
        if min_devices > RESULTS_MAX:
            raise AllocationError(
                f"claim {claim.ref}: number of requested devices {min_devices} exceeds the claim limit of {RESULTS_MAX}"
            )
        flat = [d for datas in requests for d in datas]
        has_all = any(d.all_mode for d in flat)
        return ClaimPlan(
            claim=claim,
            requests=requests,
            has_sub=[r.exact is None for r in claim.requests],
            constraints=constraints,
            min_devices=min_devices,
            simple=not has_all and not any(d.admin for d in flat),
            has_all=has_all,
        )

    def _request_data(self, claim: PreparedClaim, parent: str | None, spec: RequestSpec) -> RequestData:
        name = f"{parent}/{spec.name}" if parent else spec.name
        where = f"claim {claim.ref}, request {name}"
        if spec.capacity is not None and not self.consumable_capacity:
            raise AllocationError(
                f"{where}: has capacity requests, but the ConsumableCapacity feature is disabled"
            )
        if spec.admin_access is not None and not self.admin_access:
            raise AllocationError(
                f"{where}: admin access is requested, but the AdminAccess feature is disabled"
            )
        device_class = self.classes.get(spec.class_name)
        if device_class is None:
            raise AllocationError(f"{where}: device class {spec.class_name} not found")
        if spec.mode not in ("ExactCount", "All"):
            raise AllocationError(f"{where}: unsupported allocation mode {spec.mode!r}")
        base = parent or spec.name
        applicable = tuple(
            i
            for i, c in enumerate(claim.constraints)
            if not c.requests or base in c.requests or (parent is not None and name in c.requests)
        )
        return RequestData(
            spec=spec,
            device_class=device_class,
            name=name,
            parent=parent,
            where=f"claim {claim.ref}",
            num_devices=spec.count if spec.mode == "ExactCount" else 0,
            all_mode=spec.mode == "All",
            admin=bool(spec.admin_access),
            constraint_ids=applicable,
        )

    def selectable(self, rd: RequestData, device: Device) -> bool:
        """Class and request selectors (binding-condition devices need the feature)."""
        if device.binding_conditions and not self.binding:
            return False
        hit = rd.selectable_cache.get(device.key)
        if hit is not None:
            return hit
        ok = True
        cls = rd.device_class
        for i, expr in enumerate(cls.selectors):
            if not self.selector_matches(expr, device, f"class {cls.name}", i):
                ok = False
                break
        if ok:
            for i, expr in enumerate(rd.spec.selectors):
                if not self.selector_matches(expr, device, rd.where, i):
                    ok = False
                    break
        rd.selectable_cache[device.key] = ok
        return ok


def requests_of(claim: PreparedClaim) -> list[tuple[str, list[RequestSpec], bool]]:
    return [
        (r.name, [r.exact] if r.exact is not None else list(r.first_available), r.exact is None)
        for r in claim.requests
    ]


class _Run:
    """State of one `Allocator.allocate` call."""

    def __init__(self, alloc: Allocator, view: NodeView, plans: list[ClaimPlan]) -> None:
        self.a = alloc
        self.view = view
        self.plans = plans
        self.claims = [p.claim for p in plans]
        self.requests = [p.requests for p in plans]
        self.has_sub = [p.has_sub for p in plans]
        self.selected_sub: list[list[int]] = [[0] * len(p.requests) for p in plans]
        self.results: list[list[DeviceResult]] = [[] for _ in plans]
        #: per claim, fresh constraint objects for this attempt
        self.constraints: list[list[Constraint]] = [
            [
                MatchAttribute(attr, alloc.list_attributes)
                if is_match
                else DistinctAttribute(attr, alloc.list_attributes)
                for is_match, attr in p.constraints
            ]
            for p in plans
        ]
        #: All-mode requests: the devices they get on this node
        self.all_devices: dict[int, list[Candidate]] = {}
        #: device key -> claim indices allocating it exclusively in this attempt
        self.allocating: dict[str, set[int]] = {}
        #: device key -> capacity -> amount, for multi-allocatable devices in this attempt
        self.allocating_capacity: dict[str, dict[str, Fraction]] = {}
        self.step_budget: int | None = None
        #: device key -> number of shares of it taken in this attempt
        self.allocating_shares: dict[str, int] = {}
        self.consumed_counters: dict[PoolID, dict[tuple[str, str], Fraction]] = {}

    def _prepare_all_mode(self) -> None:
        for plan in self.plans:
            if not plan.has_all:
                continue
            min_devices = 0
            for datas in plan.requests:
                for rd in datas:
                    if rd.all_mode:
                        self.all_devices[id(rd)] = self._enumerate_all(rd)
                min_devices += min(
                    len(self.all_devices[id(d)]) if d.all_mode else d.num_devices for d in datas
                )
            if min_devices > RESULTS_MAX:
                raise AllocationError(
                    f"{plan.requests[0][0].where}: number of requested devices {min_devices} exceeds the claim limit"
                    f" of {RESULTS_MAX}"
                )

    def _enumerate_all(self, rd: RequestData) -> list[Candidate]:
        a = self.a
        found: list[Candidate] = []
        for pool, cands in zip(self.view.pools, self.view.pool_candidates, strict=True):
            if pool.incomplete:
                raise AllocationError(
                    f"{rd.where}, request {rd.name}: asks for all devices, but resource pool"
                    f" {pool.driver}/{pool.name} is currently being updated"
                )
            if pool.invalid is not None:
                raise AllocationError(
                    f"{rd.where}, request {rd.name}: asks for all devices, but resource pool"
                    f" {pool.driver}/{pool.name} is currently invalid ({pool.invalid})"
                )
            for cand in cands:
                if a.selectable(rd, cand.device) and (
                    not a.consumable_capacity or self.capacity_ok(rd, cand)
                ):
                    found.append(cand)
        return found

    # ------------------------------------------------------------------ checks

    def capacity_ok(self, rd: RequestData, cand: Candidate) -> bool:
        device = cand.device
        # Without a request an exclusive device is consumed whole (always fits; request
        # policies only exist on multi-allocatable devices), unless shares of it were
        # recorded (inconsistent input, checked the long way).
        if (
            not rd.spec.capacity
            and (not device.capacity or not device.allow_multiple)
            and (not device.capacity or device.key not in self.a.state.capacity)
        ):
            return True
        return capacity_fits(
            rd.spec.capacity,
            device.capacity,
            self.a.state.capacity.get(device.key),
            self.allocating_capacity.get(device.key),
        )

    def in_use(self, key: str) -> bool:
        return key in self.a.state.exclusive or bool(self.allocating.get(key))

    def taint_blocks(self, rd: RequestData, device: Device) -> Taint | None:
        for taint in self.a.blocking_taints(device):
            if not any(t.tolerates(taint) for t in rd.spec.tolerations):
                return taint
        return None

    def _take_counters(self, cand: Candidate) -> bool:
        pool = cand.pool
        avail = self.a.available_counters(pool)
        consumed = self.consumed_counters.setdefault(pool.id, {})
        for cc in cand.device.consumes_counters:
            for name, v in cc.counters.items():
                k = (cc.counter_set, name)
                consumed[k] = consumed.get(k, 0) + v
        for k, v in avail.items():
            if v < consumed.get(k, 0):
                self._release_counters(cand)
                return False
        return True

    def _release_counters(self, cand: Candidate) -> None:
        consumed = self.consumed_counters[cand.pool.id]
        for cc in cand.device.consumes_counters:
            for name, v in cc.counters.items():
                consumed[(cc.counter_set, name)] -= v

    # ------------------------------------------------------------------ search

    def allocate_device(
        self, ci: int, rd: RequestData, cand: Candidate, must: bool
    ) -> Callable[[], None] | None:
        a = self.a
        device = cand.device
        key = device.key
        multi = a.consumable_capacity and device.allow_multiple
        if rd.admin:
            if not multi and ci in self.allocating.get(key, ()):
                return None
        elif self.in_use(key):
            return None
        if device.consumes_counters and not a.partitionable:
            return None
        took_counters = False
        if device.consumes_counters and not (
            multi and (key in a.state.capacity or key in self.allocating_capacity)
        ):
            if not self._take_counters(cand):
                return None
            took_counters = True
        if self.taint_blocks(rd, device) is not None:
            if took_counters:
                self._release_counters(cand)
            return None
        claim_constraints = self.constraints[ci]
        constraints = [claim_constraints[i] for i in rd.constraint_ids] if rd.constraint_ids else []
        for added, c in enumerate(constraints):
            if not c.add(device):
                if must:
                    raise AllocationError(
                        f"{rd.where}, request {rd.name}: cannot add device {key} because a claim"
                        " constraint would not be satisfied"
                    )
                for prev in constraints[:added]:
                    prev.remove()
                if took_counters:
                    self._release_counters(cand)
                return None
        share_id: str | None = None
        consumed: dict[str, Qty] | None = None
        if a.consumable_capacity:
            if not self.capacity_ok(rd, cand):
                for c in constraints:
                    c.remove()
                if took_counters:
                    self._release_counters(cand)
                return None
            if multi:
                consumed = consumed_capacity(rd.spec.capacity, device.capacity)
                share_id = a.id_factory()
                pending = self.allocating_capacity.setdefault(key, {})
                for name, q in consumed.items():
                    pending[name] = pending.get(name, 0) + q.value
                self.allocating_shares[key] = self.allocating_shares.get(key, 0) + 1
        if not multi:
            self.allocating.setdefault(key, set()).add(ci)
        results = self.results[ci]
        results.append(DeviceResult(rd, cand, share_id, consumed))

        def undo() -> None:
            results.pop()
            for c in constraints:
                c.remove()
            if multi:
                if consumed is not None:
                    pending = self.allocating_capacity[key]
                    for name, q in consumed.items():
                        pending[name] -= q.value
                    self.allocating_shares[key] -= 1
                    if not self.allocating_shares[key]:
                        del self.allocating_capacity[key]
                        del self.allocating_shares[key]
            else:
                self.allocating[key].discard(ci)
            if took_counters:
                self._release_counters(cand)

        return undo

    def one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: int) -> bool:
        self.a.search_steps += 1
        if self.step_budget is not None and self.a.search_steps > self.step_budget:
            raise AllocationError(
                f"allocation aborted after {self.a.max_search_steps} search steps (max_search_steps), like"
                " upstream's per-node filter timeout"
            )
        if ci >= len(self.claims):
            return True
        claim_requests = self.requests[ci]
        if ri >= len(claim_requests):
            try:
                return self.one(ci + 1, 0, 0, 0, False, 0)
            except _MaxSizeExceeded:
                # Another allocation of earlier claims may let a smaller subrequest fit.
                return False
        datas = claim_requests[ri]
        if self.has_sub[ci][ri] and not in_sub:
            all_exceeded = True
            for sub in range(len(datas)):
                try:
                    ok = self.one(ci, ri, sub, di, True, 0)
                except _MaxSizeExceeded:
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[ci][ri] = sub
                    return True
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        rd = datas[si]
        all_devices = self.all_devices.get(id(rd)) if rd.all_mode else None
        num_devices = rd.num_devices if all_devices is None else len(all_devices)
        if rd.all_mode and not all_devices:
            return False
        if di >= num_devices:
            return self.one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + num_devices - di > RESULTS_MAX:
            raise _MaxSizeExceeded
        if all_devices is not None:
            undo = self.allocate_device(ci, rd, all_devices[di], must=True)
            if undo is None:
                return False
            try:
                done = self.one(ci, ri, si, di + 1, in_sub, 0)
            except _MaxSizeExceeded:
                undo()
                raise
            if not done:
                undo()
            return done
        candidates = self.view.candidates
        exclusive = self.a.state.exclusive
        allocating = self.allocating
        consumable = self.a.consumable_capacity
        selectable = self.a.selectable
        for idx in range(start, len(candidates)):
            cand = candidates[idx]
            key = cand.device.key
            # The in-use check is cheap, so it comes first.
            if rd.admin:
                if ci in allocating.get(key, ()):
                    continue
            elif key in exclusive or allocating.get(key):
                continue
            if not selectable(rd, cand.device):
                continue
            if consumable and not self.capacity_ok(rd, cand):
                continue
            undo = self.allocate_device(ci, rd, cand, must=False)
            if undo is None:
                continue
            try:
                done = self.one(ci, ri, si, di + 1, in_sub, idx + 1)
            except _MaxSizeExceeded:
                undo()
                raise
            if done:
                return True
            undo()
        return False

    # ------------------------------------------------------------------ results

    def execute(self) -> list[dict[str, Any]] | None:
        self._prepare_all_mode()
        limit = self.a.max_search_steps
        self.step_budget = self.a.search_steps + limit if limit is not None else None
        # The search recurses once per device, request and claim; make room for many claims.
        depth = sum(
            len(datas) + max(d.num_devices for d in datas) + 2 for p in self.plans for datas in p.requests
        )
        depth += sum(len(v) for v in self.all_devices.values()) + 2 * len(self.plans) + 200
        old_limit = sys.getrecursionlimit()
        if depth > old_limit // 2:
            sys.setrecursionlimit(depth * 2 + old_limit)
        try:
            done = self.one(0, 0, 0, 0, False, 0)
        except _MaxSizeExceeded:
            return None
        finally:
            if sys.getrecursionlimit() != old_limit:
                sys.setrecursionlimit(old_limit)
        if not done:
            return None
        return [self._allocation(ci) for ci in range(len(self.claims))]

    def _allocation(self, ci: int) -> dict[str, Any]:
        a = self.a
        claim = self.claims[ci]
        results = []
        binding = False
        for r in self.results[ci]:
            d = r.candidate.device
            out: dict[str, Any] = {
                "request": r.request.name,
                "driver": d.driver,
                "pool": d.pool,
                "device": d.name,
            }
            if r.request.admin:
                out["adminAccess"] = True
            if r.request.spec.tolerations_json:
                out["tolerations"] = [dict(t) for t in r.request.spec.tolerations_json]
            if a.binding and d.binding_conditions:
                out["bindingConditions"] = list(d.binding_conditions)
                binding = True
            if a.binding and d.binding_failure_conditions:
                out["bindingFailureConditions"] = list(d.binding_failure_conditions)
            if r.share_id is not None:
                out["shareID"] = r.share_id
            if r.consumed:
                out["consumedCapacity"] = {k: str(v) for k, v in r.consumed.items()}
            results.append(out)
        devices: dict[str, Any] = {"results": results}
        config = self._config(ci, claim)
        if config:
            devices["config"] = config
        allocation: dict[str, Any] = {"devices": devices}
        selector = self._node_selector(ci)
        if selector is not None:
            allocation["nodeSelector"] = selector
        if binding:
            allocation["allocationTimestamp"] = a.clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return allocation

    def _config(self, ci: int, claim: PreparedClaim) -> list[dict[str, Any]]:
        config: list[dict[str, Any]] = []
        class_slots: dict[str, list[dict[str, Any]]] = {}
        chosen_names: list[str] = []
        for ri, datas in enumerate(self.requests[ci]):
            rd = datas[self.selected_sub[ci][ri]]
            chosen_names.append(rd.name)
            slots = class_slots.get(rd.device_class.name)
            if slots is not None:
                for entry in slots:
                    entry["requests"].append(rd.name)
                continue
            slots = []
            for item in rd.device_class.config:
                entry = {"source": "FromClass", "requests": [rd.name], **{k: v for k, v in item.items()}}
                slots.append(entry)
                config.append(entry)
            class_slots[rd.device_class.name] = slots
        for item in claim.config:
            wanted = list(item.get("requests") or [])
            if wanted and not any(name in wanted or name.split("/")[0] in wanted for name in chosen_names):
                continue
            entry = {"source": "FromClaim", **{k: v for k, v in item.items() if k != "requests"}}
            if wanted:
                entry["requests"] = wanted
            config.append(entry)
        n_requests = len(claim.requests)
        for entry in config:
            # A list naming as many requests as the claim has means "all": say so by omitting it.
            if "requests" in entry and len(entry["requests"]) == n_requests:
                del entry["requests"]
        return config

    def _node_selector(self, ci: int) -> dict[str, Any] | None:
        node = self.view.node
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for r in self.results[ci]:
            s, d = r.candidate.slice, r.candidate.device
            node_name, selector = (
                (d.node_name, d.node_selector) if s.per_device else (s.node_name, s.node_selector)
            )
            if node_name or (d.binds_to_node and self.a.binding and node is not None):
                name = node.name if node is not None else node_name
                return {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
                    ]
                }
            if selector is None:
                continue
            if len(selector.terms) > 1:
                raise AllocationError(
                    f"ResourceSlice {s.name}: unsupported nodeSelector with {len(selector.terms)} terms"
                )
            if selector.terms:
                term = selector.raw["nodeSelectorTerms"][0]
                for target, reqs in (
                    (fields, term.get("matchFields")),
                    (expressions, term.get("matchExpressions")),
                ):
                    for req in reqs or ():
                        if not any(_same_requirement(req, have) for have in target):
                            target.append(dict(req))
        if not fields and not expressions:
            return None
        term_out: dict[str, Any] = {}
        if expressions:
            term_out["matchExpressions"] = expressions
        if fields:
            term_out["matchFields"] = fields
        return {"nodeSelectorTerms": [term_out]}


def _same_requirement(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (
        a.get("key") == b.get("key")
        and a.get("operator") == b.get("operator")
        and set(a.get("values") or ()) == set(b.get("values") or ())
    )
