"""The reusable allocator: caches per node, per expression and per claim (upstream ``NewAllocator``)."""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from dra.taints import BLOCKING_EFFECTS, Taint

from .errors import AllocationError, NodeAllocationError
from .features import ALLOCATION_FEATURES, STABLE_FEATURES, normalize_features
from .groups import Baseline, baseline
from .memo import SelectorMemo
from .model import (
    RESULTS_MAX,
    Attr,
    DerivedAttribute,
    Device,
    DeviceClass,
    Json,
    Node,
    PreparedClaim,
    RequestSpec,
    Slice,
    node_matches,
    parse_class,
    parse_node,
    parse_slice,
    parse_taint_rule,
    prepare_claim,
)
from .plan import Candidate, ClaimPlan, NodeView, RequestData
from .pools import Pool, PoolID, gather_pools
from .search import Search
from .selectors import SelectorBackend, default_backend
from .state import AllocatedState

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
        selector_memo: SelectorMemo | None = None,
        id_factory: Callable[[], str] | None = None,
        clock: Callable[[], datetime] | None = None,
        max_search_steps: int | None = None,
        deadline: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        #: abort one `allocate` call with `AllocationError` after this many search steps
        #: (None: no limit); the deterministic stand-in for upstream's filter timeout
        self.max_search_steps = max_search_steps
        #: `monotonic()` value after which a search raises `AllocationTimeout` (checked every few
        #: steps, so one call never runs much past it); None: no time limit
        self.deadline = deadline
        self.monotonic = monotonic
        self.features = normalize_features(features)
        f = self.features
        self.admin_access = "AdminAccess" in f
        self.prioritized_list = "PrioritizedList" in f
        self.partitionable = "PartitionableDevices" in f
        self.device_taints = "DeviceTaints" in f
        self.consumable_capacity = "ConsumableCapacity" in f
        self.binding = "DeviceBindingAndStatus" in f
        self.list_attributes = "ListTypeAttributes" in f
        self.fractional_capacity = "FractionalCapacityRange" in f
        self.derived_attributes = "DerivedAttributes" in f
        self.compatibility_groups = "DeviceCompatibilityGroups" in f
        self.node_operations = "OptionalNodeOperations" in f
        #: upstream would use its "stable" allocator for these features: no distinctAttribute,
        #: capacity requests ignored, ``bindsToNode`` not looked at
        self.stable_variant = (f & ALLOCATION_FEATURES) - {"DeviceTaintRules"} <= STABLE_FEATURES
        rules = (
            tuple(parse_taint_rule(r) for r in taint_rules)
            if self.device_taints and "DeviceTaintRules" in f
            else ()
        )
        self.slices: list[Slice] = [parse_slice(s, rules) for s in slices]
        #: slices left out because they declare compatibility groups and the feature is off
        self.ignored_slices: list[Slice] = []
        if not self.compatibility_groups:
            # Upstream cannot check compatibility groups without the feature, so it ignores every
            # slice declaring them: their pools look incomplete and nothing of them is allocated.
            self.ignored_slices = [s for s in self.slices if s.uses_compatibility_groups]
            self.slices = [s for s in self.slices if not s.uses_compatibility_groups]
        self.classes: dict[str, DeviceClass] = {}
        for raw in classes:
            cls = parse_class(raw)
            self.classes[cls.name] = cls
        self.state = state if state is not None else AllocatedState.from_claims(allocated_claims)
        self._backend = backend
        #: selector outcomes shared by devices that look the same to an expression (`memo`), and by
        #: the allocators the caller passes the same memo to
        self.selector_memo = selector_memo if selector_memo is not None else SelectorMemo()
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
        #: derived attribute expression -> device key -> value
        self._derived_results: dict[str, dict[str, Attr]] = {}
        self._groups_version = -1
        self._group_baselines: dict[PoolID, Baseline] = {}
        self._blocking: dict[str, tuple[Taint, ...]] = {}
        #: search steps taken over all calls (upstream's NumAllocateOneInvocations statistic)
        self.search_steps = 0
        #: identifies this allocator in `PreparedClaim.plans` without keeping it alive
        self._token = object()
        self._claim_dicts: OrderedDict[int, tuple[Json, PreparedClaim]] = OrderedDict()
        self._counters_version = -1
        self._available_counters: dict[PoolID, dict[tuple[str, str], int]] = {}

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
        invalid = {f"{p.driver}/{p.name}": p.invalid for p in pools if p.invalid is not None}
        view = NodeView(
            node, pools, candidates, per_pool, [c.device.key for c in candidates], has_multi, invalid
        )
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
        inp = self._device_input(device, f"{where}: selector #{index}")
        memo = self.selector_memo
        memo_key = memo.key(backend.engine, expr, inp)
        outcome = memo.get(memo_key) if memo_key is not None else None
        if outcome is None:
            try:
                outcome = bool(compiled.matches(inp))
            except backend.errors as exc:
                outcome = exc
            if memo_key is not None:
                memo.store(memo_key, outcome)
        if isinstance(outcome, Exception):
            raise AllocationError(
                f"{where}: selector #{index} on device {device.key}: CEL runtime error: {outcome}"
            ) from outcome
        results[device.key] = outcome
        return outcome

    def _device_input(self, device: Device, what: str) -> Any:
        """The device as CEL input, converted once; ``what`` prefixes errors ("<where>: selector #i")."""
        inp = self._inputs.get(device.key)
        if inp is None:
            if device.unsupported_attribute is not None:
                raise AllocationError(
                    f"{what} on device {device.key}: CEL runtime error: attribute"
                    f" {device.unsupported_attribute}: unsupported attribute value"
                )
            backend = self.backend
            try:
                inp = backend.device_input(device.driver, device.raw)
            except backend.errors as exc:
                raise AllocationError(f"{what} on device {device.key}: CEL runtime error: {exc}") from exc
            self._inputs[device.key] = inp
        return inp

    def derived_values(self, rd: RequestData, device: Device) -> dict[str, Attr]:
        """The request's derived attributes for the device (evaluated once per expression and
        device); `AllocationError` on a CEL error or a value of no attribute type, which aborts
        allocation as upstream does."""
        values = rd.derived_cache.get(device.key)
        if values is None:
            values = {
                d.name: self._derived_value(d, device, f"{rd.where}, request {rd.spec.name}")
                for d in rd.spec.derived
            }
            rd.derived_cache[device.key] = values
        return values

    def _derived_value(self, derived: DerivedAttribute, device: Device, where: str) -> Attr:
        results = self._derived_results.setdefault(derived.expression, {})
        hit = results.get(device.key)
        if hit is not None:
            return hit
        what = f"{where}: derived attribute {derived.name}"
        backend = self.backend
        key = "value:" + derived.expression
        compiled = self._compiled.get(key)
        if compiled is None:
            try:
                compiled = backend.engine.compile_value(derived.expression)
            except backend.errors as exc:
                raise AllocationError(f"{what}: CEL compile error: {exc}") from exc
            self._compiled[key] = compiled
        inp = self._device_input(device, what)
        try:
            raw = compiled.evaluate(inp)
        except backend.errors as exc:
            raise AllocationError(f"{what} on device {device.key}: CEL runtime error: {exc}") from exc
        attr = attribute_of(raw, self.list_attributes)
        if isinstance(attr, str):
            raise AllocationError(f"{what} on device {device.key}: {attr}")
        results[device.key] = attr
        return attr

    def group_baseline(self, pool: Pool) -> Baseline:
        """Compatibility groups of the pool's allocated devices (on any node), per counter set."""
        if self._groups_version != self.state.version:
            self._group_baselines.clear()
            self._groups_version = self.state.version
        base = self._group_baselines.get(pool.id)
        if base is None:
            devices = [d for s in pool.slices for d in s.devices]
            devices.extend(pool.other_devices)
            base = self._group_baselines[pool.id] = baseline(devices, self.state.is_allocated)
        return base

    def available_counters(self, pool: Pool) -> dict[tuple[str, str], int]:
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

    def _subtract_allocated(self, avail: dict[tuple[str, str], int], devices: Iterable[Device]) -> None:
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
        prepared = [c if isinstance(c, PreparedClaim) else self._prepared(c) for c in claims]
        plans = [self.plan(c) for c in prepared]
        if not view.has_multi and self._all_in_use(view, plans):
            return self.unschedulable(view) if view.invalid else None
        results = Search(self, view, plans, prepared).execute()
        return results if results is not None or not view.invalid else self.unschedulable(view)

    @staticmethod
    def unschedulable(view: NodeView) -> None:
        """No allocation on this node: None, or `NodeAllocationError` when an invalid pool may be
        the reason (upstream reports it then, not before: another pool might have served)."""
        if view.invalid:
            detail = "; ".join(f"{pool}: {why}" for pool, why in view.invalid.items())
            raise NodeAllocationError(
                f"invalid resource pools were encountered ({detail})", pools=view.invalid
            )
        return None

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
        """Validate the claim as upstream does before its search, with its messages and in its
        order: per request the feature gates, then each (sub)request, then the result limit,
        then the constraints."""
        requests: list[list[RequestData]] = []
        min_devices = 0
        for request in claim.requests:
            is_sub = request.exact is None
            if is_sub and not self.prioritized_list:
                raise AllocationError(
                    f"claim {claim.ref}, request {request.name}: has subrequests, but the DRAPrioritizedList"
                    " feature is disabled"
                )
            specs = [request.exact] if request.exact is not None else list(request.first_available)
            if not self.derived_attributes:
                for spec in specs:
                    if spec.derived:
                        what = f"subrequest {spec.name}" if is_sub else f"request {request.name}"
                        raise AllocationError(
                            f"claim {claim.ref}, {what}: has derived attributes, but the DRADerivedAttributes"
                            " feature is disabled"
                        )
            # Upstream's stable allocator, which serves these features, does not know capacity
            # requests at all: it ignores them (as ours does with the feature off).
            if not self.consumable_capacity and not self.stable_variant:
                for spec in specs:
                    if spec.capacity is not None:
                        what = f"subrequest {spec.name}" if is_sub else f"request {request.name}"
                        raise AllocationError(
                            f"claim {claim.ref}, {what}: has capacity requests, but the DRAConsumableCapacity"
                            " feature is disabled"
                        )
            datas = [self._request_data(claim, request.name if is_sub else None, spec) for spec in specs]
            requests.append(datas)
            min_devices += min(1 if d.all_mode else d.num_devices for d in datas)
        if min_devices > RESULTS_MAX:
            raise AllocationError(
                f"claim {claim.ref}: number of requested devices {min_devices} exceeds the claim limit of {RESULTS_MAX}"
            )
        constraints: list[tuple[bool, str]] = []
        for i, c in enumerate(claim.constraints):
            if c.match_attribute:
                constraints.append((True, c.match_attribute))
            elif c.distinct_attribute and not self.stable_variant:
                constraints.append((False, c.distinct_attribute))
            else:
                # No known constraint type (upstream's stable allocator knows only matchAttribute).
                raise AllocationError(
                    f"claim {claim.ref}, constraint #{i}: empty constraint (unsupported constraint type?)"
                )
        flat = [d for datas in requests for d in datas]
        has_all = any(d.all_mode for d in flat)
        return ClaimPlan(
            requests=requests,
            has_sub=[r.exact is None for r in claim.requests],
            constraints=constraints,
            min_devices=min_devices,
            simple=not has_all and not any(d.admin for d in flat),
            has_all=has_all,
        )

    def _request_data(self, claim: PreparedClaim, parent: str | None, spec: RequestSpec) -> RequestData:
        name = f"{parent}/{spec.name}" if parent else spec.name
        # Upstream names a subrequest by its own name in these messages.
        where = f"claim {claim.ref}, request {spec.name}"
        for i, expr in enumerate(spec.selectors):
            if not expr:
                raise AllocationError(
                    f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        if spec.admin_access is not None and not self.admin_access:
            raise AllocationError(f"{where}: admin access is requested, but the feature is disabled")
        if not spec.class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.classes.get(spec.class_name)
        if device_class is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {spec.class_name}: deviceclass.resource.k8s.io"
                f' "{spec.class_name}" not found'
            )
        if spec.mode not in ("ExactCount", "All"):
            raise AllocationError(f"{where}: unsupported count mode {spec.mode}")
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
        """Class and request selectors (binding-condition devices need the feature, devices whose
        slice skips node operations too), then the request's derived attributes, which raise
        `AllocationError` on a CEL error."""
        if device.binding_conditions and not self.binding:
            return False
        if device.skip_node_operations and not self.node_operations:
            # The kubelet would call a node plugin the driver does not run (KEP-5945: the
            # allocator fails such an allocation when the feature is off).
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
        if ok and rd.spec.derived:
            self.derived_values(rd, device)
        rd.selectable_cache[device.key] = ok
        return ok


_SCALAR_KINDS: tuple[tuple[type, str], ...] = ((bool, "bool"), (int, "int"), (str, "string"))


def _scalar_kind(value: object) -> str | None:
    for python_type, kind in _SCALAR_KINDS:
        if isinstance(value, python_type):
            return kind
    if type(value).__name__ == "Semver":
        return "version"
    return None


def attribute_of(value: object, lists: bool) -> Attr | str:
    """A derived attribute's CEL result as an attribute value, or why it cannot be one."""
    kind = _scalar_kind(value)
    if kind == "version":
        return ("version", str(value))
    if kind is not None:
        return (kind, value)
    if isinstance(value, (list, tuple)):
        if not lists:
            return "a list result needs the DRAListTypeAttributes feature"
        kinds = {_scalar_kind(item) for item in value}
        if not value or len(kinds) != 1 or None in kinds:
            return "a list result must hold values of one type: strings, ints, bools or semvers"
        (item_kind,) = kinds
        assert item_kind is not None
        items = tuple(str(v) if item_kind == "version" else v for v in value)
        return (item_kind + "s", items)
    return f"result of type {type(value).__name__} is not a string, int, bool or semver" + (
        " or a list of them" if lists else ""
    )
