"""A per-node view of the snapshot for fast allocator calls, shared by the kinds that allocate."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import Budget
from dra.allocator import AllocatedState, Allocator

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
        excluded = set(exclude_claim_uids)
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
            budget=budget or Budget(),
        )
        for claim in allocated:
            view._index(claim)
        return view

    def allocator_for(self, node: str) -> Allocator:
        key = None if self.shared_pools else node
        allocator = self._allocators.get(key)
        if allocator is None:
            slices = (
                self.snapshot.slices
                if key is None
                else [s for pool in self.local_pools.get(node, ()) for s in self.slices_by_pool[pool]]
            )
            allocator = Allocator(
                classes=self.snapshot.classes,
                slices=slices,
                state=self.state,
                taint_rules=self.taint_rules,
                features=self.snapshot.features,
                **self.budget.allocator_options(),
            )
            self._allocators[key] = allocator
        return allocator

    def _index(self, claim: Obj) -> set[PoolKey]:
        keys = {(str(r.get("driver", "")), str(r.get("pool", ""))) for r in allocation_results(claim)}
        for key in keys:
            self.claims_by_pool.setdefault(key, []).append(claim)
        return keys

    def add_allocated(self, claim: Obj) -> set[PoolKey]:
        """Count `claim`'s devices as in use from now on; returns the pools it touched."""
        self.state.add_claim(claim)
        return self._index(claim)

    def node_obj(self, node: str) -> Obj:
        return self.nodes.get(node) or {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}


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
