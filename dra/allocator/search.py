"""One allocation attempt: depth-first search with backtracking (upstream ``allocateOne``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dra.quantity import Quantity
from dra.taints import Taint

from .capacity import capacity_fits, consumed_capacity
from .constraints import Constraint, DistinctAttribute, MatchAttribute
from .errors import AllocationError, AllocationTimeout
from .groups import GroupState
from .model import RESULTS_MAX, Device, PreparedClaim
from .plan import Candidate, ClaimPlan, DeviceResult, NodeView, RequestData, ResultLimitExceeded
from .pools import PoolID
from .results import allocation_result

if TYPE_CHECKING:
    from .allocator import Allocator


class Search:
    """State of one `Allocator.allocate` call."""

    def __init__(
        self, alloc: Allocator, view: NodeView, plans: list[ClaimPlan], claims: list[PreparedClaim]
    ) -> None:
        self.a = alloc
        self.view = view
        self.plans = plans
        self.claims = claims
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
        self.allocating_capacity: dict[str, dict[str, int]] = {}
        self.step_budget: int | None = None
        #: device key -> number of shares of it taken in this attempt
        self.allocating_shares: dict[str, int] = {}
        self.consumed_counters: dict[PoolID, dict[tuple[str, str], int]] = {}
        #: (pool, counter set) -> compatibility groups of the devices there, allocated and taken
        self.groups: dict[tuple[PoolID, str], GroupState] = {}

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
                    f"{rd.where}, request {rd.spec.name}: asks for all devices, but resource pool"
                    f" {pool.driver}/{pool.name} is currently being updated"
                )
            if pool.invalid is not None:
                raise AllocationError(
                    f"{rd.where}, request {rd.spec.name}: asks for all devices, but resource pool"
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
            self.a.fractional_capacity,
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

    def _join_groups(self, cand: Candidate) -> list[tuple[tuple[PoolID, str], GroupState | None]] | None:
        """Fold the device's compatibility groups into each of its counter sets: what to restore on
        undo, or None (nothing changed) when it is incompatible with a device there."""
        base = None
        saved: list[tuple[tuple[PoolID, str], GroupState | None]] = []
        for cc in cand.device.consumes_counters:
            k = (cand.pool.id, cc.counter_set)
            current = self.groups.get(k)
            if current is None:
                if base is None:
                    base = self.a.group_baseline(cand.pool)
                state = base.states.get(cc.counter_set, GroupState())
            else:
                state = current
            if not state.admits(cc.groups):
                self._restore_groups(saved)
                return None
            saved.append((k, current))
            self.groups[k] = state.add(cc.groups)
        return saved

    def _restore_groups(self, saved: list[tuple[tuple[PoolID, str], GroupState | None]]) -> None:
        for k, previous in reversed(saved):
            if previous is None:
                del self.groups[k]
            else:
                self.groups[k] = previous

    def _release_counters(self, cand: Candidate) -> None:
        consumed = self.consumed_counters[cand.pool.id]
        for cc in cand.device.consumes_counters:
            for name, v in cc.counters.items():
                consumed[(cc.counter_set, name)] -= v

    # ------------------------------------------------------------------ search

    def allocate_device(
        self, ci: int, rd: RequestData, cand: Candidate, must: bool
    ) -> Callable[[], None] | None:
        """Take the (selectable) device for the request if it is free, within counters, tolerated,
        within the constraints and capacity: an undo function, or None.

        Upstream's order and bookkeeping are kept, including what it does not give back when a
        device is refused after its counters were taken (a taint, a constraint, capacity): those
        counters stay consumed for the rest of the attempt, and so do counters of a shared
        device when the search backtracks past it. That can make a later choice in the same
        attempt fail where a fresh attempt would succeed; it is upstream's answer.
        """
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
        joined = None
        if a.compatibility_groups and cand.pool.uses_groups and device.consumes_counters:
            # Checked right after the counters. Unlike a refusal for taints or constraints (see
            # above), this one gives the counters back: upstream's code for this step was not
            # available to compare, and keeping them would refuse compatible devices later on.
            joined = self._join_groups(cand)
            if joined is None:
                if took_counters:
                    self._release_counters(cand)
                return None
        if self.taint_blocks(rd, device) is not None:
            if joined:
                self._restore_groups(joined)
            return None
        base = rd.parent or rd.name
        claim_constraints = self.constraints[ci]
        constraints = [claim_constraints[i] for i in rd.constraint_ids] if rd.constraint_ids else []
        derived = a.derived_values(rd, device) if rd.spec.derived else None
        for added, c in enumerate(constraints):
            if not c.add(base, device, derived):
                if must:
                    raise AllocationError(
                        f"{rd.where}, request {rd.spec.name}: cannot add device {key} because a claim"
                        " constraint would not be satisfied"
                    )
                for prev in constraints[:added]:
                    prev.remove(base, device)
                if joined:
                    self._restore_groups(joined)
                return None
        if not multi:
            self.allocating.setdefault(key, set()).add(ci)
        share_id: str | None = None
        consumed: dict[str, Quantity] | None = None
        if a.consumable_capacity:
            if not self.capacity_ok(rd, cand):
                # Checked before for every device but those of an All request, whose capacity
                # was checked before the search: another request of the attempt took it since.
                if joined:
                    self._restore_groups(joined)
                return None
            if multi:
                consumed = consumed_capacity(rd.spec.capacity, device.capacity, a.fractional_capacity)
                share_id = a.id_factory()
                pending = self.allocating_capacity.setdefault(key, {})
                for name, q in consumed.items():
                    pending[name] = pending.get(name, 0) + q.nano_value()
                self.allocating_shares[key] = self.allocating_shares.get(key, 0) + 1
        results = self.results[ci]
        results.append(DeviceResult(rd, cand, share_id, consumed))

        def undo() -> None:
            results.pop()
            for c in constraints:
                c.remove(base, device)
            if joined:
                self._restore_groups(joined)
            if multi:
                if consumed is not None:
                    pending = self.allocating_capacity[key]
                    for name, q in consumed.items():
                        pending[name] -= q.nano_value()
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
        if (
            self.a.deadline is not None
            and not self.a.search_steps & 63
            and self.a.monotonic() > self.a.deadline
        ):
            raise AllocationTimeout(
                "filter operation aborted: context deadline exceeded (the time limit ran out during the search)"
            )
        if self.step_budget is not None and self.a.search_steps > self.step_budget:
            raise AllocationTimeout(
                f"filter operation aborted after {self.a.max_search_steps} search steps (max_search_steps),"
                " as upstream's per-node filter timeout would"
            )
        if ci >= len(self.claims):
            return True
        claim_requests = self.requests[ci]
        if ri >= len(claim_requests):
            try:
                return self.one(ci + 1, 0, 0, 0, False, 0)
            except ResultLimitExceeded:
                # Another allocation of earlier claims may let a smaller subrequest fit.
                return False
        datas = claim_requests[ri]
        if self.has_sub[ci][ri] and not in_sub:
            all_exceeded = True
            for sub in range(len(datas)):
                try:
                    ok = self.one(ci, ri, sub, di, True, 0)
                except ResultLimitExceeded:
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[ci][ri] = sub
                    return True
            if all_exceeded:
                raise ResultLimitExceeded
            return False
        rd = datas[si]
        all_devices = self.all_devices.get(id(rd)) if rd.all_mode else None
        num_devices = rd.num_devices if all_devices is None else len(all_devices)
        if rd.all_mode and not all_devices:
            return False
        if di >= num_devices:
            return self.one(ci, ri + 1, 0, 0, False, 0)
        if len(self.results[ci]) + num_devices - di > RESULTS_MAX:
            raise ResultLimitExceeded
        if all_devices is not None:
            undo = self.allocate_device(ci, rd, all_devices[di], must=True)
            if undo is None:
                return False
            try:
                done = self.one(ci, ri, si, di + 1, in_sub, 0)
            except ResultLimitExceeded:
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
            except ResultLimitExceeded:
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
        except ResultLimitExceeded:
            return None
        finally:
            if sys.getrecursionlimit() != old_limit:
                sys.setrecursionlimit(old_limit)
        if not done:
            return None
        return [allocation_result(self, ci) for ci in range(len(self.claims))]
