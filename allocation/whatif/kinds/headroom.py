"""Headroom: how many more copies of a claim (or template, or N devices of a class) fit, per node,
cluster-wide and per DeviceClass.

Copies are placed greedily, one at a time until the allocator says no, node after node in name order;
each copy's devices count as in use for every later copy, so devices shared between nodes (network
attached pools) are never counted twice. Nodes that look the same to the allocator — same devices,
same allocations and taints on them, no change to shared pools since — get the answer computed for
the first of them: the allocator never sees node or pool names except to order pools, and the
fingerprint keeps that order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import Budget, Context, Lookup, Progress, WhatIfKind, no_progress, register
from allocation.whatif.fingerprint import attribute_filter, node_fingerprint
from allocation.whatif.inputs import (
    DEFAULT_MAX_PER_NODE,
    form_int,
    integer,
    refuse_unknown,
    subject_form_input,
    subject_input,
)
from allocation.whatif.kinds.feasibility import subject_summary
from allocation.whatif.shards import SHARD_KINDS, headroom_sharded, shard_queue, shardable
from allocation.whatif.subject import Subject, resolve_subject
from allocation.whatif.view import (
    AllocatorView,
    PoolKey,
    allocate_on,
    allocation_results,
    node_names,
    with_allocation,
)


def _request_classes(claim: Obj) -> dict[str, str]:
    """Result request name ("req" or "req/sub") → DeviceClass name."""
    out: dict[str, str] = {}
    for r in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or []:
        name = str(r.get("name", ""))
        if r.get("exactly"):
            out[name] = str(r["exactly"].get("deviceClassName", ""))
        for sub in r.get("firstAvailable") or []:
            out[f"{name}/{sub.get('name')}"] = str(sub.get("deviceClassName", ""))
    return out


def headroom(
    *,
    snapshot: Snapshot,
    subject: Subject,
    max_per_node: int,
    progress: Progress = no_progress,
    memo: bool = True,
    budget: Budget | None = None,
    only_nodes: Sequence[str] | None = None,
) -> dict[str, Any]:
    """`memo=False` computes every node (benchmarks compare the two; answers are the same).
    `only_nodes`: the answer for these nodes only (one shard, `allocation.whatif.shards`).

    An `AllocationError` ends the run with one message (it is about the question, not a node)."""
    view = AllocatorView.build(snapshot, exclude_claim_uids=subject.exclude_uids, budget=budget)
    nodes = node_names(snapshot) if only_nodes is None else list(only_nodes)
    shared = set(view.shared_pools)
    request_classes = [_request_classes(c) for c in subject.claims]
    seen: dict[tuple[str, int], tuple[int, dict[str, int], bool]] = {}
    keep_attributes = attribute_filter(snapshot, subject.claims)
    shared_version = 0
    per_node: list[dict[str, Any]] = []
    per_class: Counter[str] = Counter()
    copy_no = 0
    for done, node in enumerate(nodes):
        progress("placing copies node by node", done, len(nodes))
        key = (
            node_fingerprint(view, node, with_labels=bool(shared), keep_attributes=keep_attributes)
            if memo
            else node,
            shared_version,
        )
        if key in seen:
            count, classes, capped = seen[key]
            per_node.append(
                {
                    "node": node,
                    "copies": count,
                    "devices_per_class": classes,
                    "capped": capped,
                    "same_as": True,
                }
            )
            per_class.update(classes)
            continue
        count, classes_used = 0, Counter[str]()
        capped = False
        touched_shared = False
        while True:
            if count >= max_per_node:
                capped = True
                break
            results = allocate_on(view, node=node, claims=subject.claims)
            if results is None:
                break
            count += 1
            for claim, allocation, req_classes in zip(subject.claims, results, request_classes, strict=True):
                copy_no += 1
                placed = with_allocation(claim, allocation, uid=f"whatif-headroom-{copy_no}")
                touched: set[PoolKey] = view.add_allocated(placed)
                touched_shared = touched_shared or bool(touched & shared)
                for r in allocation_results(placed):
                    classes_used[req_classes.get(str(r.get("request")), "?")] += 1
            if count % 16 == 0:
                progress("placing copies node by node", done, len(nodes))
        if touched_shared:
            shared_version += 1
        else:
            seen[key] = (count, dict(classes_used), capped)
        per_node.append(
            {
                "node": node,
                "copies": count,
                "devices_per_class": dict(classes_used),
                "capped": capped,
                "same_as": False,
            }
        )
        per_class.update(classes_used)
    progress("done", len(nodes), len(nodes))
    return {
        "subject": subject_summary(subject),
        "total": sum(n["copies"] for n in per_node),
        "capped": any(n["capped"] for n in per_node),
        "max_per_node": max_per_node,
        "nodes_total": len(nodes),
        "nodes_with_room": sum(1 for n in per_node if n["copies"]),
        "per_node": per_node,
        "per_class": [{"class": c, "devices": n} for c, n in sorted(per_class.items())],
        "computed_nodes": sum(1 for n in per_node if not n["same_as"]),
    }


# --------------------------------------------------------------------------- the kind

_FIELDS = {"source", "yaml", "kind", "namespace", "name", "deviceClassName", "count", "max_per_node"}


def _normalize(raw: Mapping[str, Any], lookup: Lookup) -> dict[str, Any]:
    refuse_unknown(raw, _FIELDS)
    out = subject_input(raw, lookup, allowed=("ResourceClaim", "ResourceClaimTemplate"), allow_class=True)
    cap = integer(raw, "max_per_node", "input.max_per_node", default=DEFAULT_MAX_PER_NODE, low=1, high=10_000)
    return {**out, "max_per_node": cap}


def _answer(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    subject = resolve_subject(data, ctx.snapshot)
    queue = shard_queue()
    if (
        queue is not None
        and len(ctx.snapshot.nodes) >= settings.DRADASH_WHATIF_SHARD_MIN_NODES
        and shardable(ctx.snapshot)
    ):
        return headroom_sharded(
            data=data,
            snapshot=ctx.snapshot,
            shards=settings.DRADASH_WHATIF_SHARDS,
            queue=queue,
            compute=lambda nodes: headroom(
                snapshot=ctx.snapshot,
                subject=subject,
                max_per_node=data["max_per_node"],
                budget=ctx.budget,
                only_nodes=nodes,
            ),
            budget=ctx.budget,
            progress=ctx.progress,
        )
    return headroom(
        snapshot=ctx.snapshot,
        subject=subject,
        max_per_node=data["max_per_node"],
        progress=ctx.progress,
        budget=ctx.budget,
    )


def _shard(data: dict[str, Any], nodes: list[str], snapshot: Snapshot, budget: Budget) -> dict[str, Any]:
    """One shard of a sharded headroom run, in a Celery worker (the `allocation.whatif_shard` task)."""
    return headroom(
        snapshot=snapshot,
        subject=resolve_subject(data, snapshot),
        max_per_node=data["max_per_node"],
        budget=budget,
        only_nodes=nodes,
    )


SHARD_KINDS["headroom"] = _shard


def _form_input(post: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **subject_form_input(post),
        "max_per_node": form_int(post.get("max_per_node"), DEFAULT_MAX_PER_NODE),
    }


KIND = register(
    WhatIfKind(
        name="headroom",
        label="Headroom",
        template="allocation/kinds/headroom.html",
        normalize=_normalize,
        answer=_answer,
        form_input=_form_input,
        input_help=(
            "the feasibility subject (a claim or template) or {source: class, deviceClassName, count}, "
            "optional max_per_node"
        ),
        order=20,
    )
)
