"""Fingerprints of what the allocator can see of one node, so that nodes that look alike share one
answer (headroom counts, feasibility explanations) instead of being computed a thousand times.

The allocator never sees node or pool names except to order pools, and the fingerprint keeps that
order; device attributes that no selector or constraint of the question names (serial numbers, bus
ids) are left out, unless a selector could read attributes without naming them.

What goes in, per pool of the node (by rank): each slice's spec without its node and pool names (its
digest cached per slice object, so a run at 100,000 devices does not re-encode them), the blocking
taints DeviceTaintRules put on each device (key, value, effect: a rule's name or a non-blocking
taint changes no allocation and no reason), the devices in use and how; with shared pools, where the
pool falls among them and the node's labels. Equal fingerprints mean equal answers; unequal ones only
cost a computation.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.view import AllocatorView, meta
from dradash import fastjson

# CEL that can look at attributes it does not name (map macros, sizes): then every attribute counts.
_ATTRIBUTE_WILDCARDS = (
    "exists",
    "all(",
    "map(",
    "filter(",
    "size(",
    "in device.attributes",
    "device.attributes)",
)


@dataclass(frozen=True)
class KeepAttributes:
    """Drops device attributes whose name (after the domain) does not occur in `blob` (the question's
    selectors and constraints); `blob` is also the cache key of a slice's filtered digest."""

    blob: str

    def keeps(self, name: str) -> bool:
        return name.rsplit("/", 1)[-1] in self.blob

    def __call__(self, attributes: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in attributes.items() if self.keeps(k)}


def attribute_filter(snapshot: Snapshot, claims: list[Obj]) -> KeepAttributes | None:
    """A function dropping device attributes no selector or constraint of this question can read
    (serial numbers, bus ids …), so that otherwise identical nodes share one answer; or None."""
    texts: list[str] = []
    for cls in snapshot.classes:
        texts += [
            str((sel.get("cel") or {}).get("expression", ""))
            for sel in (cls.get("spec") or {}).get("selectors") or []
        ]
    for claim in claims:
        devices = (claim.get("spec") or {}).get("devices") or {}
        for req in devices.get("requests") or []:
            for part in [req.get("exactly") or {}, *(req.get("firstAvailable") or [])]:
                texts += [
                    str((sel.get("cel") or {}).get("expression", "")) for sel in part.get("selectors") or []
                ]
        for constraint in devices.get("constraints") or []:
            texts += [str(constraint.get("matchAttribute", "")), str(constraint.get("distinctAttribute", ""))]
    blob = "\n".join(texts)
    if any(w in blob for w in _ATTRIBUTE_WILDCARDS):
        return None
    return KeepAttributes(blob)


class _SliceDigests:
    """Per ResourceSlice object (the snapshot keeps one dict per slice until it changes): the digest of
    its spec without node and pool names, per attribute filter. Holds the slice so its id stays its own;
    entries of slices no snapshot lists any more are dropped when the cache grows past the live ones."""

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[Obj, frozenset[str], dict[frozenset[str], str], dict[str, str]]] = {}
        self._lock = threading.Lock()

    def digest(self, slice_: Obj, keep: KeepAttributes | None) -> str:
        entry = self._by_id.get(id(slice_))
        if entry is None or entry[0] is not slice_:
            names = frozenset(
                k for d in (slice_.get("spec") or {}).get("devices") or [] for k in d.get("attributes") or {}
            )
            entry = (slice_, names, {}, {})
            self._by_id[id(slice_)] = entry
        blob = "\0all" if keep is None else keep.blob
        found = entry[3].get(blob)
        if found is None:
            # Keyed by the attribute names kept, so questions reading the same attributes share digests.
            kept = entry[1] if keep is None else frozenset(k for k in entry[1] if keep.keeps(k))
            found = entry[2].get(kept)
            if found is None:
                found = entry[2][kept] = _slice_digest(slice_, kept)
            entry[3][blob] = found
        return found

    def retain(self, slices: list[Obj]) -> None:
        if len(self._by_id) <= 2 * len(slices) + 1000:
            return
        with self._lock:
            live = {id(s) for s in slices}
            self._by_id = {k: v for k, v in self._by_id.items() if k in live}


SLICE_DIGESTS = _SliceDigests()


def _slice_digest(slice_: Obj, kept: frozenset[str]) -> str:
    """The digest of the slice's spec without node and pool names, with only the `kept` attributes."""
    spec = dict(slice_.get("spec") or {})
    spec.pop("nodeName", None)
    pool = dict(spec.pop("pool", None) or {})
    pool.pop("name", None)
    spec["devices"] = [
        {**d, "attributes": {k: v for k, v in (d.get("attributes") or {}).items() if k in kept}}
        if "attributes" in d
        else d
        for d in spec.get("devices") or []
    ]
    # Key order is kept as served: equal text is equal content; a reordering costs only a computation.
    text = fastjson.dumps([pool, spec])
    return hashlib.sha1(text.encode()).hexdigest()


def _device_names(slices: list[Obj]) -> list[str]:
    return [str(d.get("name")) for s in slices for d in (s.get("spec") or {}).get("devices") or []]


def claims_key(claims: list[Obj], *, per_node: bool) -> tuple[str, ...]:
    """The claims tried on a node, for a memo next to the node's fingerprint: their names, and their
    specs when they are built per node (the extended-resource claim depends on what the node's device
    plugins serve)."""
    if not per_node:
        return tuple(str(meta(c).get("name")) for c in claims)
    return tuple(
        json.dumps([meta(c).get("name"), c.get("spec")], sort_keys=True, default=str) for c in claims
    )


def node_fingerprint(
    view: AllocatorView, node: str, *, with_labels: bool, keep_attributes: KeepAttributes | None = None
) -> str:
    """What the allocator can see of `node`'s own pools, with their names replaced by their rank.

    Remembered per snapshot (for every view of it) while no allocation of the view touched the
    node's pools: the next question about the same snapshot looks it up."""
    memo_key = (node, with_labels, "\0all" if keep_attributes is None else keep_attributes.blob)
    pristine = node not in view.touched_nodes
    if pristine:
        found = view.fingerprint_memo.get(memo_key)
        if found is not None:
            return found
    fingerprint = _node_fingerprint(view, node, with_labels=with_labels, keep_attributes=keep_attributes)
    if pristine:
        view.fingerprint_memo[memo_key] = fingerprint
    return fingerprint


def remember_fingerprints(view: AllocatorView, nodes: list[str]) -> None:
    """Compute and remember the fingerprints of `nodes` for questions whose claims name no attribute
    (their selectors read only the classes'): what a worker does ahead of its runs (`whatif_warm`), so
    the first such question finds every node's fingerprint and slice digest made."""
    keep_attributes = attribute_filter(view.snapshot, [])
    for node in nodes:
        node_fingerprint(view, node, with_labels=bool(view.shared_pools), keep_attributes=keep_attributes)


def _node_fingerprint(
    view: AllocatorView, node: str, *, with_labels: bool, keep_attributes: KeepAttributes | None
) -> str:
    SLICE_DIGESTS.retain(view.snapshot.slices)
    pools = sorted(view.local_pools.get(node, []))
    parts: list[Any] = []
    for rank, key in enumerate(pools):
        slices = sorted(view.slices_by_pool.get(key, ()), key=lambda s: str(meta(s).get("name", "")))
        if view.shared_pools:
            # Pools are tried in (driver, name) order: keep where this pool falls among the shared ones.
            parts.append(("order", rank, sum(1 for shared in view.shared_pools if shared < key)))
        parts.append(("slices", rank, tuple(SLICE_DIGESTS.digest(s, keep_attributes) for s in slices)))
        rules = view.blocking_rules_of_pool(key)
        if rules:
            parts.append(("rules", rank, _rule_taints(rules, _device_names(slices))))
        used = view.used(key)
        if used:
            parts.append(("used", rank, used))
    if with_labels:
        parts.append(("labels", sorted((meta(view.node_obj(node)).get("labels") or {}).items())))
    return hashlib.sha1(repr(parts).encode()).hexdigest()


def _rule_taints(rules: list[tuple[str | None, Obj]], devices: list[str]) -> tuple[Any, ...]:
    """Per device (in slice order), the blocking taints the rules put on it, sorted."""
    out = []
    for device in devices:
        taints = sorted(
            repr(_taint_identity(rule)) for selected, rule in rules if selected is None or selected == device
        )
        if taints:
            out.append((device, tuple(taints)))
    return tuple(out)


def _taint_identity(rule: Obj) -> tuple[str, str, str]:
    taint = (rule.get("spec") or {}).get("taint") or {}
    return (str(taint.get("key", "")), str(taint.get("value", "")), str(taint.get("effect", "")))
