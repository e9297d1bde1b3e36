"""Device plugin removal: "if the device plugin for this extended resource is removed from these nodes (or
this DeviceClass gets `extendedResourceName`), does every current and pending pod that asks for it still
fit — through DRA, or a device plugin that stays — and where?"

The snapshot is changed as asked (the resource leaves the nodes' `status.allocatable`; the class declares
the name and, being the newest, wins it), then the pods that lose their backend — bound to one of those
nodes and served by its plugin — and the pending pods are placed one at a time, bound pods first, each on
its own node if it can stay there, else on the first node (by name) that takes it: where a device plugin
stays and has room, or through DRA with the scheduler's extended-resource claim (`dra.extended`) given to
the allocator. Every placement's devices count as in use for the pods after it.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from typing import Any

from allocation.snapshot import Obj, Snapshot
from allocation.whatif.base import Budget, Context, Lookup, Progress, WhatIfInputError, WhatIfKind, register
from allocation.whatif.inputs import check_class, refuse_unknown, text
from allocation.whatif.kinds.feasibility import explain_claim
from allocation.whatif.subject import resolve_pod_subject
from allocation.whatif.view import (
    AllocatorView,
    allocate_on,
    meta,
    node_names,
    result_devices,
    with_allocation,
)
from dra.allocator import AllocationError, AllocationTimeout
from dra.extended import (
    device_plugin_capacity,
    extended_resources,
    is_dra_extended_resource_name,
    pod_extended_counts,
)

MAX_NODES = 1000
#: the creationTimestamp the changed class gets: newer than any real one, so it wins the name
WINS_AT = "9999-12-31T23:59:59Z"

_FIELDS = {"resource", "nodes", "deviceClassName"}


def _normalize(raw: Mapping[str, Any], lookup: Lookup) -> dict[str, Any]:
    refuse_unknown(raw, _FIELDS)
    resource = text(raw, "resource", "input.resource")
    if not is_dra_extended_resource_name(resource):
        raise WhatIfInputError(
            "input.resource",
            f"{resource!r} is not an extended resource name (domain/name outside kubernetes.io, "
            "or deviceclass.resource.kubernetes.io/<class>)",
        )
    nodes = raw.get("nodes") or []
    if isinstance(nodes, str):
        nodes = [n for n in nodes.replace(",", " ").split() if n]
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise WhatIfInputError("input.nodes", "must be a list of node names")
    if len(nodes) > MAX_NODES:
        raise WhatIfInputError("input.nodes", f"at most {MAX_NODES} nodes, got {len(nodes)}")
    for i, node in enumerate(nodes):
        if lookup.find("Node", "", node) is None:
            raise WhatIfInputError(f"input.nodes[{i}]", f"no node named {node} in the inventory")
    out: dict[str, Any] = {"resource": resource, "nodes": sorted(set(nodes))}
    device_class = text(raw, "deviceClassName", "input.deviceClassName", required=False)
    if device_class:
        check_class(device_class, "input.deviceClassName", lookup)
        out["deviceClassName"] = device_class
    return out


def _changed_snapshot(snapshot: Snapshot, *, resource: str, nodes: set[str], device_class: str) -> Snapshot:
    new_nodes = []
    for node in snapshot.nodes:
        if str(meta(node).get("name")) in nodes:
            node = copy.deepcopy(node)
            for part in ("allocatable", "capacity"):
                ((node.get("status") or {}).get(part) or {}).pop(resource, None)
        new_nodes.append(node)
    classes = snapshot.classes
    if device_class:
        classes = []
        for cls in snapshot.classes:
            if meta(cls).get("name") == device_class:
                cls = copy.deepcopy(cls)
                cls.setdefault("spec", {})["extendedResourceName"] = resource
                cls["metadata"]["creationTimestamp"] = WINS_AT
            classes.append(cls)
    return Snapshot(
        classes=classes,
        slices=snapshot.slices,
        claims=snapshot.claims,
        templates=snapshot.templates,
        taint_rules=snapshot.taint_rules,
        pods=snapshot.pods,
        nodes=new_nodes,
        pdbs=snapshot.pdbs,
        resource_versions=snapshot.resource_versions,
        features=snapshot.features,
    )


def _served_by_dra(pod: Obj, resource: str) -> bool:
    ext = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    return any(m.get("resourceName") == resource for m in ext.get("requestMappings") or ())


def plugin_removal(
    *,
    snapshot: Snapshot,
    resource: str,
    nodes: list[str],
    device_class: str = "",
    progress: Progress | None = None,
    budget: Budget | None = None,
) -> dict[str, Any]:
    plugin_nodes = [
        str(meta(n).get("name")) for n in snapshot.nodes if device_plugin_capacity(n, resource) > 0
    ]
    removed = set(nodes) if nodes else set(plugin_nodes)
    world = _changed_snapshot(snapshot, resource=resource, nodes=removed, device_class=device_class)
    ext = extended_resources(world.classes)
    serving_class = ext.classes.get(resource, "")
    notes: list[str] = []
    if device_class:
        notes.append(
            f"DeviceClass {device_class} is given extendedResourceName: {resource} (and counted as the newest "
            "class declaring it)"
        )
    notes += [c for c in ext.conflicts if resource in c]
    if not serving_class:
        notes.append(f"no DeviceClass maps {resource}: DRA cannot serve it anywhere")
    for name in sorted(removed - set(plugin_nodes)):
        notes.append(f"node {name} does not advertise {resource}: nothing to remove there")

    by_node = {str(meta(n).get("name")): n for n in world.nodes}
    affected: list[tuple[Obj, int]] = []
    staying: list[dict[str, Any]] = []
    plugin_used: Counter[str] = Counter()
    for pod in snapshot.pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        count = pod_extended_counts(pod).get(resource, 0)
        if not count:
            continue
        bound = str((pod.get("spec") or {}).get("nodeName") or "")
        if _served_by_dra(pod, resource):
            staying.append(_ref(pod, count, bound, "DRA", "already served through DRA"))
        elif bound and bound not in removed:
            plugin_used[bound] += count
            staying.append(_ref(pod, count, bound, "device plugin", "its node keeps the device plugin"))
        else:
            affected.append((pod, count))
    affected.sort(key=lambda pc: (not (pc[0].get("spec") or {}).get("nodeName"), _key(pc[0])))

    view = AllocatorView.build(world, budget=budget)
    order = node_names(world)
    answers: list[dict[str, Any]] = []
    for done, (pod, count) in enumerate(affected):
        if progress is not None:
            progress("placing each pod", done, len(affected))
        answers.append(
            _place(view, world, pod, count, resource=resource, order=order, by_node=by_node, used=plugin_used)
        )
    if progress is not None:
        progress("done", len(affected), len(affected))
    fits = sum(1 for a in answers if a["fits"])
    return {
        "resource": resource,
        "device_class": serving_class,
        "nodes_removed": sorted(removed & set(plugin_nodes)),
        "notes": notes,
        "pods": answers,
        "pods_total": len(answers),
        "pods_fit": fits,
        "all_fit": fits == len(answers),
        "moving_to_dra": sum(1 for a in answers if a["fits"] and a["backend"] == "DRA"),
        "staying": staying,
    }


def _key(pod: Obj) -> tuple[str, str]:
    return (str(meta(pod).get("namespace", "")), str(meta(pod).get("name", "")))


def _ref(pod: Obj, count: int, node: str, backend: str, why: str) -> dict[str, Any]:
    ns, name = _key(pod)
    return {"namespace": ns, "name": name, "count": count, "node": node, "backend": backend, "why": why}


def _place(
    view: AllocatorView,
    world: Snapshot,
    pod: Obj,
    count: int,
    *,
    resource: str,
    order: list[str],
    by_node: Mapping[str, Obj],
    used: Counter[str],
) -> dict[str, Any]:
    ns, name = _key(pod)
    was = str((pod.get("spec") or {}).get("nodeName") or "")
    answer: dict[str, Any] = {
        "namespace": ns,
        "name": name,
        "count": count,
        "was_node": was,
        "was_backend": "device plugin" if was else "pending",
        "fits": False,
        "node": "",
        "backend": "",
        "devices": [],
        "reason": "",
        "refused": {},
    }
    unbound = copy.deepcopy(pod)
    unbound.setdefault("spec", {}).pop("nodeName", None)
    try:
        subject = resolve_pod_subject(unbound, world)
    except WhatIfInputError as exc:
        answer["reason"] = exc.message
        return answer
    if subject.blockers:
        answer["reason"] = "; ".join(subject.blockers)
        return answer
    candidates = ([was] if was in by_node else []) + [n for n in order if n != was]
    refused: Counter[str] = Counter()
    explained_on = ""
    for node_name in candidates:
        node = view.node_obj(node_name)
        why = subject.node_allows(node, ignore_bound_node=True)  # kube-scheduler's node filters
        if why:
            refused[why] += 1
            continue
        capacity = device_plugin_capacity(node, resource)
        if capacity > 0:
            if used[node_name] + count <= capacity:
                used[node_name] += count
                answer.update(fits=True, node=node_name, backend="device plugin")
                return answer
            refused[f"device plugin full ({capacity - used[node_name]} of {capacity} left)"] += 1
            continue
        claims, _ = subject.claims_for(node)
        if not subject.extended:
            refused[f"no DeviceClass maps {resource}"] += 1
            continue
        try:
            results = allocate_on(view, node=node_name, claims=claims)
        except AllocationTimeout:
            raise
        except AllocationError as exc:
            if not exc.node_local:
                answer["reason"] = str(exc)
                return answer
            results = None
        if results is None:
            refused["not enough devices through DRA"] += 1
            explained_on = explained_on or node_name
            continue
        for i, (claim, result) in enumerate(zip(claims, results, strict=True)):
            view.add_allocated(with_allocation(claim, result, uid=f"whatif-{ns}-{name}-{i}"))
        devices = [d for r in results for d in result_devices(r)]
        answer.update(fits=True, node=node_name, backend="DRA", devices=devices)
        return answer
    answer["refused"] = dict(refused.most_common())
    answer["reason"] = ", ".join(f"{k} ({v})" for k, v in refused.most_common(3)) or "no node"
    if explained_on:
        claims, _ = subject.claims_for(view.node_obj(explained_on))
        verdicts = explain_claim(view, node=explained_on, claim=claims[-1])
        answer["explained_on"] = explained_on
        answer["verdicts"] = Counter(str(v.get("reason", "")) for v in verdicts).most_common()
    return answer


def _answer(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    return plugin_removal(
        snapshot=ctx.snapshot,
        resource=data["resource"],
        nodes=list(data.get("nodes") or []),
        device_class=data.get("deviceClassName", ""),
        progress=ctx.progress,
        budget=ctx.budget,
    )


def _form_input(post: Mapping[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"resource": str(post.get("resource", "")).strip()}
    getlist = getattr(post, "getlist", None)
    nodes = getlist("nodes") if getlist else post.get("nodes") or []
    if isinstance(nodes, str):
        nodes = [nodes]
    data["nodes"] = [n for raw in nodes for n in str(raw).replace(",", " ").split() if n]
    if post.get("deviceClassName"):
        data["deviceClassName"] = str(post.get("deviceClassName", "")).strip()
    return data


KIND = register(
    WhatIfKind(
        name="plugin_removal",
        label="Device plugin removal",
        template="allocation/kinds/plugin_removal.html",
        normalize=_normalize,
        answer=_answer,
        form_input=_form_input,
        input_help=(
            "{resource: extended resource name, nodes: [node names] (default: every node advertising it), "
            "optional deviceClassName (gets extendedResourceName)}"
        ),
        order=40,
    )
)
