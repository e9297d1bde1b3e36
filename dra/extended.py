"""Extended resources served by DRA (DRAExtendedResource, GA in 1.37; dra-api.md §9).

* which DeviceClass serves a name: every class serves ``deviceclass.resource.kubernetes.io/<class>``;
  of several classes declaring one ``extendedResourceName`` the most recently created wins, on equal
  creationTimestamp the class whose name sorts first;
* which backend serves it on a node: a device plugin when the node advertises the resource in
  ``status.allocatable`` (non-zero), DRA when it advertises none and a class maps the name;
* the claim the scheduler builds for a pod: one ExactCount request per (container, resource) named
  ``container-<i>-request-<j>`` (``i`` over init containers then containers, ``j`` the resource's
  position among the container's sorted resource names); a plain init container (not a sidecar)
  reuses the request of a long-lived container for the same resource, which then asks for the
  larger count. No tolerations: tainted devices never serve extended-resource pods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dra.names import is_qualified_name
from dra.quantity import Quantity, QuantityError
from dra.taints import parse_time

JSON = dict[str, Any]
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
_GENERATED_PREFIX_MAX = 57


def is_extended_resource_name(name: str) -> bool:
    """Upstream `IsExtendedResourceName`: domain-prefixed, outside the `kubernetes.io/` namespace, not a
    `requests.` quota name, and a qualified name once `requests.` is put in front (its quota name).

    What a DeviceClass may declare as `extendedResourceName`: another class's implicit name is refused."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def is_dra_extended_resource_name(name: str) -> bool:
    """A pod resource DRA may serve: an extended resource name, or a class's implicit
    `deviceclass.resource.kubernetes.io/<class>`."""
    return name.startswith(IMPLICIT_PREFIX) or is_extended_resource_name(name)


def count_of(value: object) -> int:
    """An extended-resource quantity as a device count; 0 for anything that is not a whole number."""
    try:
        quantity = Quantity.parse(str(value).strip())
    except QuantityError:
        return 0
    return quantity.as_integer() if quantity.is_integer() and quantity.sign() > 0 else 0


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _created(obj: Mapping[str, Any]) -> float:
    moment = parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    return moment.timestamp() if moment else 0.0


@dataclass(frozen=True)
class ExtendedResources:
    #: extended resource name → the DeviceClass that serves it
    classes: dict[str, str]
    #: DeviceClass → the names it serves (its implicit name first)
    served: dict[str, list[str]]
    #: one sentence per contested explicit name: who declares it, who wins and why
    conflicts: list[str]


def extended_resources(classes: Iterable[Mapping[str, Any]]) -> ExtendedResources:
    """Which class serves each extended resource name (implicit and explicit)."""
    by_name: dict[str, str] = {}
    served: dict[str, list[str]] = {}
    claimants: dict[str, list[Mapping[str, Any]]] = {}
    for cls in classes:
        name = _name(cls)
        served[name] = [IMPLICIT_PREFIX + name]
        by_name[IMPLICIT_PREFIX + name] = name
        explicit = (cls.get("spec") or {}).get("extendedResourceName")
        if explicit:
            claimants.setdefault(str(explicit), []).append(cls)
    conflicts: list[str] = []
    for resource, contenders in sorted(claimants.items()):
        ranked = sorted(contenders, key=lambda c: (-_created(c), _name(c)))
        winner = _name(ranked[0])
        by_name[resource] = winner
        served[winner].append(resource)
        if len(ranked) > 1:
            everyone = ", ".join(sorted(_name(c) for c in contenders))
            losers = ", ".join(sorted(_name(c) for c in ranked[1:]))
            conflicts.append(
                f"extended resource {resource} is declared by {everyone}; {winner} wins (newest"
                f" creationTimestamp, then name), ignored: {losers}"
            )
    return ExtendedResources(classes=by_name, served=served, conflicts=conflicts)


def served_by_device_plugin(node: Mapping[str, Any], resource: str) -> bool:
    """The node advertises the resource itself (a device plugin): DRA does not serve it there."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return count_of(allocatable.get(resource, "0")) > 0


def generated_claim_prefix(pod: str, claim: str) -> str:
    """`<pod>-<claim>-` for a template's claim, both parts shortened in proportion past 57 characters."""
    if len(pod) + len(claim) > _GENERATED_PREFIX_MAX:
        total = len(pod) + len(claim)
        pod_len = max(1, _GENERATED_PREFIX_MAX * len(pod) // total)
        claim_len = max(1, _GENERATED_PREFIX_MAX - pod_len)
        pod, claim = pod[:pod_len], claim[:claim_len]
    return f"{pod}-{claim}-"


@dataclass(frozen=True)
class ExtendedRequest:
    container: str
    resource: str
    #: the claim request that serves it: container-<i>-request-<j>
    request: str
    device_class: str
    count: int


def extended_requests(pod: Mapping[str, Any], mapping: Mapping[str, str]) -> list[ExtendedRequest]:
    """One entry per (container, DRA-backed extended resource) of the pod, sorted by request name."""
    spec = pod.get("spec") or {}
    init = [(c, c.get("restartPolicy") == "Always") for c in spec.get("initContainers") or []]
    containers = init + [(c, True) for c in spec.get("containers") or []]
    wanted: list[tuple[int, str, str, int, bool]] = []  # (index, container, resource, count, long-lived)
    names: dict[tuple[int, str], str] = {}
    for i, (container, long_lived) in enumerate(containers):
        resources = container.get("resources") or {}
        amounts = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for j, resource in enumerate(sorted(amounts)):
            count = count_of(amounts[resource])
            if resource in mapping and is_dra_extended_resource_name(resource) and count > 0:
                wanted.append((i, str(container.get("name", "")), resource, count, long_lived))
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


def extended_claim(pod: Mapping[str, Any], requests: Sequence[ExtendedRequest]) -> JSON:
    """The claim the scheduler creates for the pod (before the API server names it)."""
    meta = pod.get("metadata") or {}
    name = str(meta.get("name", ""))
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": f"{name}-extended-resources",
            "generateName": f"{name}-extended-resources-",
            "namespace": str(meta.get("namespace", "")),
            "annotations": {CLAIM_ANNOTATION: "true"},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": name,
                    "uid": str(meta.get("uid", "")),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"devices": {"requests": claim_requests(requests)}},
    }


def pod_extended_counts(pod: Mapping[str, Any]) -> dict[str, int]:
    """The pod's effective request per extended resource name, as NodeResourcesFit counts it: the sum
    over its containers and sidecars, or the largest plain init container if that asks for more."""
    spec = pod.get("spec") or {}
    steady: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    parts = [(c, c.get("restartPolicy") == "Always") for c in spec.get("initContainers") or []]
    parts += [(c, True) for c in spec.get("containers") or []]
    for container, long_lived in parts:
        resources = container.get("resources") or {}
        amounts = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        for resource, value in amounts.items():
            if not is_dra_extended_resource_name(str(resource)):
                continue
            count = count_of(value)
            if count <= 0:
                continue
            if long_lived:
                steady[resource] = steady.get(resource, 0) + count
            else:
                init_peak[resource] = max(init_peak.get(resource, 0), count)
    return {r: max(steady.get(r, 0), init_peak.get(r, 0)) for r in sorted({*steady, *init_peak})}


def device_plugin_capacity(node: Mapping[str, Any], resource: str) -> int:
    """How many of `resource` the node's device plugin advertises (0: none, DRA may serve it)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    return count_of(allocatable.get(resource, "0"))


#: pods in these phases hold no node resources any more (the scheduler's cache drops them)
TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def pod_device_plugin_use(pod: Mapping[str, Any], node: Mapping[str, Any]) -> dict[str, int]:
    """What the pod holds of the node's device plugins: its count of each resource the node advertises."""
    return {
        resource: count
        for resource, count in pod_extended_counts(pod).items()
        if device_plugin_capacity(node, resource) > 0
    }


def device_plugin_holdings(
    pods: Iterable[Mapping[str, Any]], nodes: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[tuple[str, str], int]]:
    """Pod uid → (node, resource) → how many of the node's device-plugin devices that bound, unfinished pod
    holds. Pods that hold none are left out."""
    held: dict[str, dict[tuple[str, str], int]] = {}
    for pod in pods:
        node_name = str((pod.get("spec") or {}).get("nodeName") or "")
        node = nodes.get(node_name)
        if node is None or (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
            continue
        use = {(node_name, resource): count for resource, count in pod_device_plugin_use(pod, node).items()}
        if use:
            held[str((pod.get("metadata") or {}).get("uid", ""))] = use
    return held


def device_plugin_shortfall(
    pod: Mapping[str, Any], node: Mapping[str, Any], used: Mapping[tuple[str, str], int]
) -> str | None:
    """NodeResourcesFit for the resources the node's device plugins serve: "Insufficient <name>" when the
    pod's count does not fit what is left, else None. `used` excludes the pod itself."""
    node_name = str((node.get("metadata") or {}).get("name", ""))
    for resource, count in pod_device_plugin_use(pod, node).items():
        capacity = device_plugin_capacity(node, resource)
        held = used.get((node_name, resource), 0)
        if held + count > capacity:
            return (
                f"Insufficient {resource} (device plugin: {held} of {capacity} in use, the pod needs {count})"
            )
    return None
