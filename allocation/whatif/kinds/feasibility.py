"""Feasibility: can this claim, template or pod be allocated now, on which nodes, with which devices,
and where it cannot, why — per device, from the allocator's own `explain`."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import (
    Budget,
    Context,
    Lookup,
    Progress,
    WhatIfInputError,
    WhatIfKind,
    no_progress,
    register,
)
from allocation.whatif.fingerprint import attribute_filter, claims_key, node_fingerprint
from allocation.whatif.inputs import (
    SUBJECT_KINDS,
    node_input,
    refuse_unknown,
    subject_form_input,
    subject_input,
)
from allocation.whatif.subject import Subject, resolve_subject
from allocation.whatif.view import AllocatorView, allocate_on, meta, node_names, result_devices
from dra.allocator import AllocationError, AllocationTimeout, explain

# Per infeasible node and claim, at most this many device verdicts are listed (the counts cover all).
MAX_VERDICTS = 64


def verdict_json(verdict: Any) -> dict[str, Any]:
    data = dataclasses.asdict(verdict) if dataclasses.is_dataclass(verdict) else dict(vars(verdict))
    return {
        k: (v if isinstance(v, str | int | float | bool | type(None) | list | dict) else str(v))
        for k, v in data.items()
    }


def explain_claim(view: AllocatorView, *, node: str, claim: Obj) -> list[dict[str, Any]]:
    verdicts = explain(
        classes=(),
        slices=(),
        allocated_claims=(),
        claim=claim,
        node=view.node_obj(node),
        allocator=view.allocator_for(node),
    )
    return [verdict_json(v) for v in verdicts]


def _asks(request: Any) -> str:
    """One request as a person reads it: `gpus: 16 × gpu.example.com`, `all of …`, `first of: …`."""
    if not isinstance(request, dict):
        return ""
    name = str(request.get("name", ""))

    def one(spec: Any) -> str:
        if not isinstance(spec, dict):
            return "?"
        cls = str(spec.get("deviceClassName", ""))
        if spec.get("allocationMode") == "All":
            return f"all of {cls}"
        return f"{spec.get('count', 1)} × {cls}"

    if isinstance(request.get("exactly"), dict):
        return f"{name}: {one(request['exactly'])}"
    options = request.get("firstAvailable")
    if isinstance(options, list) and options:
        return f"{name}: the first that fits of " + " | ".join(one(o) for o in options)
    return name


def _requests(claim: Obj) -> list[Any]:
    return list(((claim.get("spec") or {}).get("devices") or {}).get("requests") or [])


def subject_summary(subject: Subject) -> dict[str, Any]:
    return {
        "kind": subject.kind,
        "namespace": subject.namespace,
        "name": subject.name,
        "label": subject.label,
        "claims": [
            {
                "name": meta(c).get("name"),
                "source": subject.claim_sources.get(str(meta(c).get("name")), ""),
                "requests": [r.get("name") for r in _requests(c)],
                "asks": [_asks(r) for r in _requests(c)],
            }
            for c in subject.claims
        ],
        "extended": [dataclasses.asdict(r) for r in subject.extended],
        "fixed_claims": [f"{meta(c).get('namespace')}/{meta(c).get('name')}" for c in subject.fixed],
        "blockers": subject.blockers,
        "notes": subject.notes,
    }


def feasibility(
    *,
    snapshot: Snapshot,
    subject: Subject,
    only_node: str = "",
    progress: Progress = no_progress,
    budget: Budget | None = None,
    memo: bool = True,
) -> dict[str, Any]:
    """Try the subject on every node (first-fit, as the scheduler's Filter does per node).

    Nodes that look alike (`node_fingerprint`) share the first one's answer; `memo=False` computes
    and explains every node (tests and benchmarks compare the two).

    An `AllocationError` is about the question (a CEL runtime error, a claim the allocator refuses),
    not about one node: it ends the run with one message. `AllocationTimeout` ends it as out of budget.
    """
    view = AllocatorView.build(snapshot, exclude_claim_uids=subject.exclude_uids, budget=budget)
    nodes = [n for n in node_names(snapshot) if not only_node or n == only_node]
    if only_node and not nodes:
        raise WhatIfInputError("input.node", f"no node named {only_node} in the inventory")
    feasible: list[dict[str, Any]] = []
    infeasible: list[dict[str, Any]] = []
    # A node that looks like one that did not fit is neither tried nor explained again: it gets a reference.
    keep_attributes = attribute_filter(snapshot, subject.claims)
    explained: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    placed: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    for done, node in enumerate(nodes):
        progress("trying each node", done, len(nodes))
        node_obj = view.node_obj(node)
        why_not = subject.node_allows(node_obj)
        if why_not:
            infeasible.append({"node": node, "reason": why_not, "claims": []})
            continue
        claims, notes = subject.claims_for(node_obj)
        if not claims:
            feasible.append({"node": node, "claims": [], "notes": [*notes, "nothing left to allocate"]})
            continue
        key = (
            node_fingerprint(view, node, with_labels=bool(view.shared_pools), keep_attributes=keep_attributes)
            if memo
            else node,
            claims_key(claims, per_node=bool(subject.extended)),
        )
        if key in placed:  # looks like a node that fit: it fits the same way, on its own devices
            feasible.append(_rebased(placed[key], view, node=node, notes=notes))
            continue
        if key in explained:  # looks like a node that did not fit: it does not either
            results = None
        else:
            try:
                results = allocate_on(view, node=node, claims=claims)
            except AllocationError as exc:
                if not exc.node_local:
                    raise  # a bad claim or selector fails the run once, with one message
                results = None  # this node only (an invalid pool): explained like any misfit
            if results is not None:
                placed[key] = entry = {
                    "node": node,
                    "notes": notes,
                    "claims": [
                        {
                            "claim": meta(c).get("name"),
                            "devices": result_devices(r),
                            "nodeSelector": r.get("nodeSelector"),
                        }
                        for c, r in zip(claims, results, strict=True)
                    ],
                }
                feasible.append(entry)
                continue
        first = explained.get(key)
        if first is not None:
            infeasible.append(
                {
                    "node": node,
                    "reason": first["reason"],
                    "same_as": first["node"],
                    "claims": [],
                    "notes": notes,
                }
            )
            continue
        explained[key] = entry = _explain_node(view, node=node, claims=claims, notes=notes)
        infeasible.append(entry)
    progress("done", len(nodes), len(nodes))
    reasons: Counter[str] = Counter()
    for entry in infeasible:
        reasons[entry["reason"]] += 1
    return {
        "subject": subject_summary(subject),
        "feasible": bool(feasible),
        "nodes_total": len(nodes),
        "nodes_feasible": len(feasible),
        "feasible_nodes": feasible,
        "infeasible_nodes": infeasible,
        "reasons": dict(reasons.most_common()),
    }


def _rebased(entry: dict[str, Any], view: AllocatorView, *, node: str, notes: list[str]) -> dict[str, Any]:
    """`entry` (the answer for a node that looks the same) moved to `node`: its own pools, same ranks."""
    pools = dict(zip(view.local_pools.get(entry["node"], []), view.local_pools.get(node, []), strict=True))
    old = entry["node"]

    def move(d: dict[str, Any]) -> dict[str, Any]:
        to = pools.get((str(d.get("driver")), str(d.get("pool"))))
        return {**d, "pool": to[1]} if to else d

    def move_selector(selector: Any) -> Any:
        """The node selector with `old`'s name replaced by `node`'s wherever it is a whole value."""
        if isinstance(selector, dict):
            return {k: move_selector(v) for k, v in selector.items()}
        if isinstance(selector, list):
            return [move_selector(v) for v in selector]
        return node if selector == old else selector

    return {
        "node": node,
        "notes": notes,
        "same_as": old,
        "claims": [
            {
                **c,
                "devices": [move(d) for d in c["devices"]],
                "nodeSelector": move_selector(c.get("nodeSelector")),
            }
            for c in entry["claims"]
        ],
    }


def _explain_node(view: AllocatorView, *, node: str, claims: list[Obj], notes: list[str]) -> dict[str, Any]:
    per_claim = []
    # device → its verdicts' reasons over every claim and request, in order. A device is (driver, pool,
    # name, n): the n-th device of that name a request saw, for a pool that publishes a name twice.
    reasons: dict[tuple[str, str, str, int], list[str]] = {}
    all_alone_ok = True
    for claim in claims:
        try:
            verdicts = explain_claim(view, node=node, claim=claim)
        except AllocationTimeout:
            raise
        except AllocationError as exc:
            per_claim.append(
                {"claim": meta(claim).get("name"), "error": str(exc), "counts": {}, "verdicts": []}
            )
            all_alone_ok = False
            continue
        counts = Counter(str(v.get("reason", "")) for v in verdicts)
        seen = Counter[tuple[str, str, str, str]]()
        for v in verdicts:
            name = (str(v.get("driver", "")), str(v.get("pool", "")), str(v.get("device", "")))
            at = (str(v.get("request", "")), *name)
            seen[at] += 1
            key = (*name, seen[at])
            reasons.setdefault(key, []).append(str(v.get("reason", "")))
        per_claim.append(
            {
                "claim": meta(claim).get("name"),
                "counts": dict(counts.most_common()),
                "verdicts": verdicts[:MAX_VERDICTS],
                "truncated": max(0, len(verdicts) - MAX_VERDICTS),
            }
        )
        try:
            alone = allocate_on(view, node=node, claims=[claim])
        except AllocationTimeout:
            raise
        except AllocationError:
            alone = None
        all_alone_ok = all_alone_ok and alone is not None
    if len(claims) > 1 and all_alone_ok:
        reason = "each claim fits alone, but not all together"
    else:
        reason = _why_not(reasons, asked=_devices_asked(claims), claims=len(claims))
    return {"node": node, "reason": reason, "claims": per_claim, "notes": notes}


def _why_not(
    reasons: Mapping[tuple[str, str, str, int], list[str]],
    *,
    asked: tuple[int, bool] | None = None,
    claims: int = 1,
) -> str:
    """A node's heading: the devices the claims could use there, when there are some (they were not
    enough, or not in a combination the requests and constraints accept), then the commonest reasons the
    others were not. Each device counts once, however many claims and requests looked at it: usable if
    one of them could use it, else under the first reason it was refused. `asked`: how many devices the
    claims ask for together (`_devices_asked`), said when the usable ones are fewer."""
    usable = sum(1 for said in reasons.values() if "usable" in said)
    top = Counter(said[0] for said in reasons.values() if said and "usable" not in said)
    others = ", ".join(f"{k} ({v})" for k, v in top.most_common(3))
    if not usable:
        return others or "no device here for the classes the claims ask for"
    devices = f"{usable} usable device{'' if usable == 1 else 's'}"
    if asked is not None and asked[0] > usable:
        count, at_least = asked
        who = "the claim asks" if claims == 1 else "the claims ask together"
        enough = f"{devices}; {who} for {'at least ' if at_least else ''}{count}"
    else:
        enough = f"{devices}, but the claim's requests and constraints cannot be met from {'it' if usable == 1 else 'them'}"
    return f"{enough}; not usable: {others}" if others else enough


def _devices_asked(claims: list[Obj]) -> tuple[int, bool] | None:
    """How many devices the claims' requests ask for together, and whether that is a least (a request
    with alternatives asks for its smallest); None when one asks for all of a class or cannot be read."""
    total, at_least = 0, False
    for claim in claims:
        for request in _requests(claim):
            if not isinstance(request, dict):
                return None
            options = (
                [request["exactly"]]
                if isinstance(request.get("exactly"), dict)
                else request.get("firstAvailable")
            )
            if not isinstance(options, list) or not options:
                return None
            counts = []
            for option in options:
                if not isinstance(option, dict) or option.get("allocationMode", "ExactCount") != "ExactCount":
                    return None
                count = option.get("count", 1)
                if type(count) is not int or count < 1:
                    return None
                counts.append(count)
            total += min(counts)
            at_least = at_least or len(set(counts)) > 1
    return (total, at_least) if total else None


# --------------------------------------------------------------------------- the kind

_FIELDS = {"source", "yaml", "kind", "namespace", "name", "node"}


def _normalize(raw: Mapping[str, Any], lookup: Lookup) -> dict[str, Any]:
    refuse_unknown(raw, _FIELDS)
    out = subject_input(raw, lookup, allowed=SUBJECT_KINDS)
    node = node_input(raw, lookup)
    return {**out, "node": node} if node else out


def _answer(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    subject = resolve_subject(data, ctx.snapshot)
    return feasibility(
        snapshot=ctx.snapshot,
        subject=subject,
        only_node=data.get("node", ""),
        progress=ctx.progress,
        budget=ctx.budget,
    )


def _form_input(post: Mapping[str, Any]) -> dict[str, Any]:
    data = subject_form_input(post)
    if post.get("node"):
        data["node"] = str(post.get("node", "")).strip()
    return data


KIND = register(
    WhatIfKind(
        name="feasibility",
        label="Feasibility",
        template="allocation/kinds/feasibility.html",
        normalize=_normalize,
        answer=_answer,
        form_input=_form_input,
        input_help=(
            "{source: yaml, yaml} | {source: pick, kind: ResourceClaim|ResourceClaimTemplate|Pod, namespace, "
            "name}, optional node"
        ),
        order=10,
    )
)
