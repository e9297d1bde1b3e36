"""Turning a found solution into ``status.allocation`` JSON (results, config, node selector)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from typing import TYPE_CHECKING, Any

from .errors import AllocationError
from .model import PreparedClaim

if TYPE_CHECKING:
    from .search import Search


def allocation_result(run: Search, ci: int) -> dict[str, Any]:
    a = run.a
    claim = run.claims[ci]
    results = []
    binding = False
    for r in run.results[ci]:
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
    config = _config(run, ci, claim)
    if config:
        devices["config"] = config
    allocation: dict[str, Any] = {"devices": devices}
    selector = _node_selector(run, ci)
    if selector is not None:
        allocation["nodeSelector"] = selector
    if binding:
        allocation["allocationTimestamp"] = a.clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return allocation


def _config(run: Search, ci: int, claim: PreparedClaim) -> list[dict[str, Any]]:
    """Class configs, once per class naming the requests that use it, then the claim's configs
    that apply to an allocated request (by its name or its chosen subrequest's ``req/sub``).
    A config that covers every request of the claim drops its list ("empty means all")."""
    chosen: list[str] = []
    config: list[dict[str, Any]] = []
    class_slots: dict[str, list[dict[str, Any]]] = {}
    for ri, datas in enumerate(run.requests[ci]):
        rd = datas[run.selected_sub[ci][ri]]
        chosen.append(rd.name)
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
        applies = not wanted or any(
            request.name in wanted or (request.exact is None and name in wanted)
            for request, name in zip(claim.requests, chosen, strict=True)
        )
        if not applies:
            continue
        entry = {"source": "FromClaim", **{k: v for k, v in item.items() if k != "requests"}}
        if wanted:
            entry["requests"] = wanted
        config.append(entry)
    for entry in config:
        names = entry.get("requests")
        if names and all(
            request.name in names or (request.exact is None and name in names)
            for request, name in zip(claim.requests, chosen, strict=True)
        ):
            del entry["requests"]
    return config


def _node_selector(run: Search, ci: int) -> dict[str, Any] | None:
    node = run.view.node
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for r in run.results[ci]:
        s, d = r.candidate.slice, r.candidate.device
        node_name, selector = (
            (d.node_name, d.node_selector) if s.per_device else (s.node_name, s.node_selector)
        )
        # bindsToNode pins the allocation whatever the features (upstream's stable allocator,
        # which serves the smaller feature sets, does not look at it).
        if node_name or (d.binds_to_node and not run.a.stable_variant and node is not None):
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
