"""A per-node view of the snapshot for fast allocator calls, shared by the kinds that allocate."""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import Budget
from dra.allocator import AllocatedState, AllocationError, Allocator
from dra.allocator.model import device_key, parse_taint_rule
from dra.selection import device_selector
from dra.taints import BLOCKING_EFFECTS

PoolKey = tuple[str, str]  # (driver, pool name)


def meta(obj: Obj) -> dict[str, Any]:
    return obj.get("metadata") or {}


def obj_ref(obj: Obj) -> str:
    m = meta(obj)
    return f"{m['namespace']}/{m.get('name', '')}" if m.get("namespace") else str(m.get("name", ""))


def pool_key_of_slice(slice_: Obj) -> PoolKey:
    spec = slice_.get("spec") or {}
    return (str(spec.get("driver", "")), str((spec.get("pool") or {}).get("name", "")))


def allocation_results(claim: Obj) -> list[dict[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or [])


def node_names(snapshot: Snapshot) -> list[str]:
    """Nodes to consider: the Node objects; without any, the nodes that slices name."""
    names = {str(meta(n).get("name")) for n in snapshot.nodes if meta(n).get("name")}
    if not names:
        names = {str(s["spec"]["nodeName"]) for s in snapshot.slices if (s.get("spec") or {}).get("nodeName")}
    return sorted(names)


@dataclass
class AllocatorView:
    """Allocators over the snapshot, reused for every copy, with one allocated state kept current as
    copies are placed. Also indexes which pools are bound to one node by name and which are shared
    (allNodes, nodeSelector, per-device selection), and the allocated claims per pool.

    When every pool is bound to one node, each node gets an allocator built from its own pools only,
    on first use: parsing all 10,000 devices of a large cluster costs more than answering for the few
    nodes a question usually needs. With shared pools one allocator over everything serves all nodes.
    """

    snapshot: Snapshot
    state: AllocatedState
    slices_by_pool: dict[PoolKey, list[Obj]] = field(default_factory=dict)
    local_pools: dict[str, list[PoolKey]] = field(default_factory=dict)
    shared_pools: list[PoolKey] = field(default_factory=list)
    claims_by_pool: dict[PoolKey, list[Obj]] = field(default_factory=dict)
    nodes: dict[str, Obj] = field(default_factory=dict)
    taint_rules: list[Obj] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)
    #: rules by the (driver, pool) their selector names (None: any), each with the device it names
    #: (None: every device of the pool); None when a rule is invalid (then every allocator gets all
    #: rules, so the allocator refuses the question as before)
    rules_by_pool: dict[tuple[str | None, str | None], list[tuple[int, str | None, Obj]]] | None = None
    #: whether any rule has a NoSchedule or NoExecute taint
    any_blocking: bool = True
    #: per pool, what the fingerprint says about its devices in use (dropped when a claim touches it)
    used_memo: dict[PoolKey, Any] = field(default_factory=dict)
    #: node fingerprints as of the snapshot, shared by every view of one base (`node_fingerprint`)
    fingerprint_memo: dict[tuple[str, bool, str], str] = field(default_factory=dict)
    #: nodes whose pools got allocations in this view: their fingerprints are not the snapshot's
    touched_nodes: set[str] = field(default_factory=set)
    #: pool → the nodes it is bound to by name
    pool_nodes: dict[PoolKey, list[str]] = field(default_factory=dict)
    #: the allocated claims the state was built from (a base keeps them to diff the next snapshot)
    allocated: list[Obj] = field(default_factory=list)
    _allocators: dict[str | None, Allocator] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        snapshot: Snapshot,
        *,
        exclude_claim_uids: Iterable[str] = (),
        extra_taint_rules: Sequence[Obj] = (),
        budget: Budget | None = None,
    ) -> AllocatorView:
        """A view of its own (allocations added to it stay in it). What does not depend on the run —
        pools, the in-use state, the rule index — is computed once per snapshot and copied."""
        excluded = frozenset(exclude_claim_uids)
        base = _base(snapshot, excluded, tuple(extra_taint_rules))
        return cls(
            snapshot=snapshot,
            state=base.state.copy(),
            slices_by_pool=base.slices_by_pool,
            local_pools=base.local_pools,
            shared_pools=base.shared_pools,
            claims_by_pool={k: list(v) for k, v in base.claims_by_pool.items()},
            nodes=base.nodes,
            taint_rules=base.taint_rules,
            budget=budget or Budget(),
            rules_by_pool=base.rules_by_pool,
            any_blocking=base.any_blocking,
            used_memo=dict(base.used_memo),
            fingerprint_memo=base.fingerprint_memo,
            pool_nodes=base.pool_nodes,
        )

    @classmethod
    def _compute(
        cls,
        snapshot: Snapshot,
        excluded: frozenset[str],
        extra_taint_rules: Sequence[Obj],
        previous: AllocatorView | None = None,
    ) -> AllocatorView:
        if previous is not None and all(
            _same(getattr(previous.snapshot, kind), getattr(snapshot, kind))
            for kind in ("slices", "nodes", "taint_rules")
        ):
            return previous._with_claims(snapshot, excluded)
        by_pool: dict[PoolKey, list[Obj]] = defaultdict(list)
        for s in snapshot.slices:
            by_pool[pool_key_of_slice(s)].append(s)
        local: dict[str, list[PoolKey]] = defaultdict(list)
        shared: list[PoolKey] = []
        for key, slices in sorted(by_pool.items()):
            node_of = {(s.get("spec") or {}).get("nodeName") or None for s in slices}
            if None in node_of:
                shared.append(key)
            for n in sorted(x for x in node_of if x):
                local[n].append(key)
        allocated = [c for c in snapshot.allocated_claims if meta(c).get("uid") not in excluded]
        rules = [*snapshot.taint_rules, *extra_taint_rules]
        state = AllocatedState.from_claims(allocated)
        view = cls(
            snapshot=snapshot,
            state=state,
            slices_by_pool=dict(by_pool),
            local_pools=dict(local),
            shared_pools=shared,
            nodes={str(meta(n).get("name")): n for n in snapshot.nodes},
            taint_rules=rules,
        )
        view.rules_by_pool = _index_rules(rules)
        view.any_blocking = any(
            ((r.get("spec") or {}).get("taint") or {}).get("effect") in BLOCKING_EFFECTS for r in rules
        )
        view.allocated = allocated
        for claim in allocated:
            view._index(claim)
        for key in view.claims_by_pool:
            view.used(key)
        for n, keys in view.local_pools.items():
            for key in keys:
                view.pool_nodes.setdefault(key, []).append(n)
        return view

    def _with_claims(self, snapshot: Snapshot, excluded: frozenset[str]) -> AllocatorView:
        """This base for `snapshot`, whose slices, nodes and rules are this one's (the same objects):
        only the claims are read again; a node fingerprint stays when its pools' use is unchanged."""
        allocated = [c for c in snapshot.allocated_claims if meta(c).get("uid") not in excluded]
        view = AllocatorView(
            snapshot=snapshot,
            state=self.state,
            slices_by_pool=self.slices_by_pool,
            local_pools=self.local_pools,
            shared_pools=self.shared_pools,
            nodes=self.nodes,
            taint_rules=self.taint_rules,
            rules_by_pool=self.rules_by_pool,
            any_blocking=self.any_blocking,
            pool_nodes=self.pool_nodes,
            allocated=allocated,
        )
        if not self._claims_changed_in(view, allocated):
            view.state = AllocatedState.from_claims(allocated)
            view.claims_by_pool = {}
            view.used_memo = {}
            for claim in allocated:
                view._index(claim)
        for key in view.claims_by_pool:
            view.used(key)
        changed = {
            k
            for k in set(view.used_memo) | set(self.used_memo)
            if view.used_memo.get(k) != self.used_memo.get(k)
        }
        stale = {n for k in changed for n in self.pool_nodes.get(k, ())}
        if self.shared_pools and changed:
            stale = set(self.nodes) | set(self.local_pools)  # shared pools: keep nothing (conservative)
        view.fingerprint_memo = {k: v for k, v in self.fingerprint_memo.items() if k[0] not in stale}
        return view

    def _claims_changed_in(self, view: AllocatorView, allocated: list[Obj]) -> bool:
        """Bring `view` (holding this base's state) to `allocated` by the claims that changed: this
        base's state copied, the claims gone removed and the new ones added, the holders of their
        devices put back in snapshot order (as `from_claims` lists them). False when too much
        changed to be worth it, or the state disagrees (then the caller rebuilds it)."""
        old_ids = {id(c) for c in self.allocated}
        new_ids = {id(c) for c in allocated}
        removed = [c for c in self.allocated if id(c) not in new_ids]
        added = [c for c in allocated if id(c) not in old_ids]
        if len(removed) + len(added) > max(64, len(allocated) // 8):
            return False
        state = self.state.copy()
        by_pool = dict(self.claims_by_pool)
        used = dict(self.used_memo)
        devices: set[str] = set()
        try:
            for claim in removed:
                state.remove_claim(claim)
            for claim in added:
                state.add_claim(claim)
        except AllocationError:
            return False
        for claim in [*removed, *added]:
            for r in allocation_results(claim):
                key = (str(r.get("driver", "")), str(r.get("pool", "")))
                # as AllocatedState keys them
                devices.add(device_key(str(r.get("driver")), str(r.get("pool")), str(r.get("device"))))
                used.pop(key, None)
                by_pool[key] = [c for c in by_pool.get(key, ()) if c is not claim]
        for claim in added:
            for key in {
                (str(r.get("driver", "")), str(r.get("pool", ""))) for r in allocation_results(claim)
            }:
                by_pool[key].append(claim)
        for holders in (state.exclusive, state.shared):
            for d in devices & holders.keys():
                holders[d].sort(key=_ref_order)
        view.state = state
        view.claims_by_pool = {k: v for k, v in by_pool.items() if v}
        view.used_memo = used
        return True

    def used(self, key: PoolKey) -> tuple[str, ...]:
        """Pool `key`'s devices in use and how (exclusive or shared, admin access, capacity), sorted:
        what node fingerprints compare. Memoized until a claim touching the pool is added."""
        found = self.used_memo.get(key)
        if found is None:
            found = self.used_memo[key] = _used_now(self, key)
        return found  # type: ignore[no-any-return]

    def rules_of_pool(self, key: PoolKey) -> list[tuple[str | None, Obj]]:
        """The rules that may select devices of pool `key`, in rule order, each with the one device
        it names (None: all). Every rule when the rules could not be indexed."""
        if self.rules_by_pool is None:
            return [
                (device_selector((r.get("spec") or {}).get("deviceSelector")).device, r)
                for r in self.taint_rules
            ]
        found: list[tuple[int, str | None, Obj]] = []
        for bucket in ((key[0], key[1]), (key[0], None), (None, key[1]), (None, None)):
            found.extend(self.rules_by_pool.get(bucket, ()))
        found.sort(key=lambda t: t[0])
        return [(device, rule) for _i, device, rule in found]

    def blocking_rules_of_pool(self, key: PoolKey) -> list[tuple[str | None, Obj]]:
        """`rules_of_pool` with a NoSchedule or NoExecute taint: only those change an allocation."""
        if not self.any_blocking:
            return []
        return [
            (device, rule)
            for device, rule in self.rules_of_pool(key)
            if ((rule.get("spec") or {}).get("taint") or {}).get("effect") in BLOCKING_EFFECTS
        ]

    def allocator_for(self, node: str) -> Allocator:
        key = None if self.shared_pools else node
        allocator = self._allocators.get(key)
        if allocator is None:
            slices = (
                self.snapshot.slices
                if key is None
                else [s for pool in self.local_pools.get(node, ()) for s in self.slices_by_pool[pool]]
            )
            rules = self.taint_rules
            if key is not None and self.rules_by_pool is not None:
                # Only the rules that can select one of its devices: the others change nothing here,
                # and parsing 1,000 rules per node would cost more than the node's own answer.
                keep = {
                    id(r) for pool in self.local_pools.get(node, ()) for _d, r in self.rules_of_pool(pool)
                }
                rules = [r for r in self.taint_rules if id(r) in keep]
            allocator = Allocator(
                classes=self.snapshot.classes,
                slices=slices,
                state=self.state,
                taint_rules=rules,
                features=self.snapshot.features,
                **self.budget.allocator_options(),
            )
            self._allocators[key] = allocator
        return allocator

    def _index(self, claim: Obj) -> set[PoolKey]:
        keys = {(str(r.get("driver", "")), str(r.get("pool", ""))) for r in allocation_results(claim)}
        for key in keys:
            self.claims_by_pool.setdefault(key, []).append(claim)
            self.used_memo.pop(key, None)
        return keys

    def add_allocated(self, claim: Obj) -> set[PoolKey]:
        """Count `claim`'s devices as in use from now on; returns the pools it touched."""
        self.state.add_claim(claim)
        touched = self._index(claim)
        for key in touched:
            self.touched_nodes.update(self.pool_nodes.get(key, ()))
        return touched

    def node_obj(self, node: str) -> Obj:
        return self.nodes.get(node) or {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}


def _used_now(view: AllocatorView, key: PoolKey) -> tuple[str, ...]:
    out = []
    for claim in view.claims_by_pool.get(key, ()):
        for r in allocation_results(claim):
            if (r.get("driver"), r.get("pool")) == key:
                capacity = r.get("consumedCapacity")
                out.append(
                    repr(
                        (
                            r.get("device"),
                            bool(r.get("shareID")),
                            r.get("adminAccess"),
                            "" if capacity is None else json.dumps(capacity, sort_keys=True, default=str),
                        )
                    )
                )
    out.sort()
    return tuple(out)


_base_lock = threading.Lock()
_bases: dict[
    tuple[int, frozenset[str], tuple[int, ...]], tuple[Snapshot, tuple[Obj, ...], AllocatorView]
] = {}


def _base(snapshot: Snapshot, excluded: frozenset[str], extra: tuple[Obj, ...]) -> AllocatorView:
    """The run-independent part of a view of `snapshot`, kept for the last few snapshots and questions
    (a snapshot is immutable; the worker's next run usually asks about the same one)."""
    key = (id(snapshot), excluded, tuple(id(r) for r in extra))
    with _base_lock:
        found = _bases.get(key)
        if (
            found is not None
            and found[0] is snapshot
            and all(a is b for a, b in zip(found[1], extra, strict=True))
        ):
            return found[2]
    with _base_lock:
        previous = next(
            (
                v[2]
                for k, v in reversed(_bases.items())
                if k[1:] == key[1:] and all(a is b for a, b in zip(v[1], extra, strict=True))
            ),
            None,
        )
    base = AllocatorView._compute(snapshot, excluded, extra, previous)
    with _base_lock:
        for old in [k for k, v in _bases.items() if v[0] is not snapshot]:
            del _bases[old]  # a newer snapshot: the older ones' bases are not asked for again
        if extra:
            # Extra rules are a taint impact's, made anew by each run (their timeAdded is its "now"):
            # another run never asks for a base of other extra rules again, and each holds the in-use
            # state of every claim (about 27 MB at 100,000 devices).
            for old in [k for k in _bases if k[2] and k[2] != key[2]]:
                del _bases[old]
        while len(_bases) >= 8:
            del _bases[next(iter(_bases))]
        _bases[key] = (snapshot, extra, base)
    return base


def _ref_order(ref: str) -> tuple[str, str]:
    """A claim reference ("namespace/name") in the order the snapshot lists claims."""
    namespace, _, name = ref.partition("/")
    return (namespace, name) if name else ("", namespace)


def _same(a: Sequence[Obj], b: Sequence[Obj]) -> bool:
    """The same objects in the same order (the snapshot cache keeps an unchanged object's dict)."""
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _index_rules(
    rules: Sequence[Obj],
) -> dict[tuple[str | None, str | None], list[tuple[int, str | None, Obj]]] | None:
    """Rules by (driver, pool) of their selector; a rule without selector selects nothing and is left
    out. None when a rule is one the allocator refuses (its error must stay the run's answer)."""
    index: dict[tuple[str | None, str | None], list[tuple[int, str | None, Obj]]] = {}
    for i, rule in enumerate(rules):
        try:
            parse_taint_rule(rule)
        except (AllocationError, TypeError, ValueError, AttributeError):
            return None
        selector = device_selector((rule.get("spec") or {}).get("deviceSelector"))
        if not selector.present:
            continue
        index.setdefault((selector.driver, selector.pool), []).append((i, selector.device, rule))
    return index


def allocate_on(view: AllocatorView, *, node: str, claims: Sequence[Obj]) -> list[dict[str, Any]] | None:
    result: list[dict[str, Any]] | None = view.allocator_for(node).allocate(view.node_obj(node), list(claims))
    return result


def with_allocation(claim: Obj, allocation: dict[str, Any], *, uid: str) -> Obj:
    """A copy of `claim` that holds `allocation` (to count its devices as in use)."""
    m = dict(meta(claim))
    m["uid"] = uid
    return {**claim, "metadata": m, "status": {"allocation": allocation}}


def result_devices(allocation: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in (allocation.get("devices") or {}).get("results") or []:
        item = {k: r.get(k) for k in ("request", "driver", "pool", "device")}
        if r.get("adminAccess"):
            item["adminAccess"] = True
        if r.get("shareID"):
            item["shareID"] = r["shareID"]
        if r.get("consumedCapacity"):
            item["consumedCapacity"] = r["consumedCapacity"]
        out.append(item)
    return out
