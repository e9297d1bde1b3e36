"""Names the scheduler derives: generated claim names and DRA-backed extended resources (dra-api.md §9)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from simcluster.controllers.base import parse_time
from simcluster.controllers.common import IMPLICIT_EXTENDED_PREFIX, meta, name_of, quantity_to_int

JSON = dict[str, Any]
_MAX_GENERATED_PREFIX = 57


def generated_claim_prefix(pod: str, claim: str) -> str:
    """`<pod>-<claim>-`, both parts shortened proportionally when longer than 57 characters together."""
    if len(pod) + len(claim) > _MAX_GENERATED_PREFIX:
        total = len(pod) + len(claim)
        pod_len = max(1, _MAX_GENERATED_PREFIX * len(pod) // total)
        claim_len = max(1, _MAX_GENERATED_PREFIX - pod_len)
        pod, claim = pod[:pod_len], claim[:claim_len]
    return f"{pod}-{claim}-"


def extended_resource_classes(classes: Sequence[JSON]) -> dict[str, str]:
    """Extended resource name → DeviceClass (dra-api §9): implicit names always; for an explicit name shared
    by several classes the newest creationTimestamp wins, then the smaller class name."""
    mapping: dict[str, str] = {}
    for cls in classes:
        mapping[IMPLICIT_EXTENDED_PREFIX + name_of(cls)] = name_of(cls)
    explicit: dict[str, list[JSON]] = {}
    for cls in classes:
        name = (cls.get("spec") or {}).get("extendedResourceName")
        if name:
            explicit.setdefault(str(name), []).append(cls)
    for resource, candidates in explicit.items():
        winner = min(candidates, key=lambda c: (-creation_time(c), name_of(c)))
        mapping[resource] = name_of(winner)
    return mapping


def creation_time(obj: Mapping[str, Any]) -> float:
    moment = parse_time(meta(obj).get("creationTimestamp"))
    return moment.timestamp() if moment else 0.0


@dataclass(frozen=True)
class ExtendedRequest:
    container: str
    resource: str
    request: str
    device_class: str
    count: int


def extended_requests(pod: Mapping[str, Any], mapping: Mapping[str, str]) -> list[ExtendedRequest]:
    """One mapping per (container, DRA-backed extended resource).

    Requests are named `container-<i>-request-<j>`: `i` indexes init containers then containers, `j` the
    resource among the container's sorted resource names. A plain init container (not a sidecar) runs
    before the long-lived containers, so it reuses their request for the same resource; the claim then
    asks for the larger of the counts (see `claim_requests`)."""
    spec = pod.get("spec") or {}
    init = [(c, c.get("restartPolicy") == "Always") for c in spec.get("initContainers") or []]
    containers = init + [(c, True) for c in spec.get("containers") or []]
    wanted: list[tuple[int, str, str, int, bool]] = []  # (index, container, resource, count, long-lived)
    names: dict[tuple[int, str], str] = {}
    for i, (container, long_lived) in enumerate(containers):
        resources = container.get("resources") or {}
        amounts = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for j, resource in enumerate(sorted(amounts)):
            count = quantity_to_int(amounts[resource])
            if resource in mapping and count > 0:
                wanted.append((i, str(container["name"]), resource, count, long_lived))
                names[(i, resource)] = f"container-{i}-request-{j}"
    shared: dict[str, str] = {}
    for i, _, resource, _, long_lived in wanted:
        if long_lived:
            shared.setdefault(resource, names[(i, resource)])
    out = [
        ExtendedRequest(
            container,
            resource,
            names[(i, resource)] if long_lived else shared.get(resource, names[(i, resource)]),
            mapping[resource],
            count,
        )
        for i, container, resource, count, long_lived in wanted
    ]
    return sorted(out, key=lambda r: (r.request, r.container))


def claim_requests(mappings: Sequence[ExtendedRequest]) -> list[JSON]:
    """The claim's requests, sorted by name: one per request name, with the largest count asked for it."""
    counts: dict[str, tuple[str, int]] = {}
    for m in mappings:
        device_class, count = counts.get(m.request, (m.device_class, 0))
        counts[m.request] = (device_class, max(count, m.count))
    return [
        {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}}
        for name, (cls, count) in sorted(counts.items())
    ]
