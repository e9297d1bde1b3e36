"""ResourceClaims: the list, one claim's results with per-device status, counts per state."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.db.models import Count, Q, QuerySet

from inventory.filters import ClaimFilterSet
from inventory.models import Claim, Device, KubeObject
from inventory.redaction import redact_device_status
from inventory.selectors.common import JSON, InvalidFilters, clip


def claim_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[Claim]:
    filterset = ClaimFilterSet(data=filters or {}, queryset=Claim.objects.all())
    if not filterset.is_valid():
        raise InvalidFilters(filterset.errors)
    return filterset.qs


#: the Claims page's sortable columns: ?sort=KEY (ascending) or ?sort=-KEY, every page sorted by the server.
#: "age" ascending is the youngest first (creation timestamps are RFC 3339 in UTC, so they sort as text).
CLAIM_SORTS: dict[str, tuple[str, ...]] = {
    "namespace": ("namespace", "name"),
    "name": ("name", "namespace"),
    "state": ("state", "namespace", "name"),
    "requests": ("request_count", "namespace", "name"),
    "devices": ("device_count", "namespace", "name"),
    "age": ("-created", "namespace", "name"),
}


def claim_ordering(*, sort: str) -> tuple[str, ...]:
    """The ORDER BY for ?sort= (an unknown key is the default, namespace then name)."""
    descending = sort.startswith("-")
    fields = CLAIM_SORTS.get(sort.lstrip("-"), CLAIM_SORTS["namespace"])
    if not descending:
        return fields
    return tuple(f[1:] if f.startswith("-") else "-" + f for f in fields)


#: how much of a node selector and of the constraints a claim's page shows (its YAML view has all of it)
TERMS_SHOWN = 8
REQUIREMENTS_SHOWN = 16
VALUES_SHOWN = 8
CONSTRAINTS_SHOWN = 16
REQUESTS_SHOWN = 16


@dataclass(frozen=True)
class ShownRequirement:
    """`key operator (values)` of a node selector term; `field` for a matchFields entry (metadata.name)."""

    key: str
    operator: str
    values: list[str]
    more_values: int = 0
    field: bool = False


@dataclass(frozen=True)
class ShownTerm:
    """One nodeSelectorTerm: its requirements all hold (an empty term matches no node)."""

    requirements: list[ShownRequirement]
    more_requirements: int = 0


@dataclass(frozen=True)
class ShownNodeSelector:
    """A core/v1 NodeSelector as a page reads it: any one of its terms holds."""

    terms: list[ShownTerm]
    more_terms: int = 0


@dataclass(frozen=True)
class ShownConstraint:
    """`matchAttribute: X across requests a, b` (or distinctAttribute); no requests named = all of them."""

    kind: str
    attribute: str
    requests: list[str]
    more_requests: int = 0


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _requirement(raw: Any, *, field: bool) -> ShownRequirement:
    raw = raw if isinstance(raw, Mapping) else {}
    values = [clip(v, 63) for v in _list(raw.get("values"))]
    return ShownRequirement(
        key=clip(raw.get("key"), 316),
        operator=clip(raw.get("operator"), 16),
        values=values[:VALUES_SHOWN],
        more_values=max(0, len(values) - VALUES_SHOWN),
        field=field,
    )


def node_selector_view(raw: Any) -> ShownNodeSelector | None:
    """An allocation's `nodeSelector` as terms of `key operator (values)` lines, capped; None when absent."""
    if not isinstance(raw, Mapping):
        return None
    terms = []
    listed = _list(raw.get("nodeSelectorTerms"))
    for term in listed[:TERMS_SHOWN]:
        term = term if isinstance(term, Mapping) else {}
        requirements = [_requirement(r, field=False) for r in _list(term.get("matchExpressions"))]
        requirements += [_requirement(r, field=True) for r in _list(term.get("matchFields"))]
        terms.append(
            ShownTerm(
                requirements[:REQUIREMENTS_SHOWN],
                more_requirements=max(0, len(requirements) - REQUIREMENTS_SHOWN),
            )
        )
    return ShownNodeSelector(terms, more_terms=max(0, len(listed) - TERMS_SHOWN))


@dataclass(frozen=True)
class ShownConstraints:
    constraints: list[ShownConstraint]
    more: int = 0


def constraints_view(raw: Any) -> ShownConstraints:
    """A claim's `spec.devices.constraints`, capped (the page says how many more there are)."""
    shown = []
    listed = _list(raw)
    for constraint in listed[:CONSTRAINTS_SHOWN]:
        constraint = constraint if isinstance(constraint, Mapping) else {}
        kind = next((k for k in ("matchAttribute", "distinctAttribute") if constraint.get(k)), "")
        requests = [clip(r, 127) for r in _list(constraint.get("requests"))]
        shown.append(
            ShownConstraint(
                kind=kind,
                attribute=clip(constraint.get(kind), 316) if kind else "",
                requests=requests[:REQUESTS_SHOWN],
                more_requests=max(0, len(requests) - REQUESTS_SHOWN),
            )
        )
    return ShownConstraints(shown, more=max(0, len(listed) - CONSTRAINTS_SHOWN))


@dataclass
class ClaimDetail:
    claim: Claim
    obj: KubeObject
    devices: list[Device]
    pods: list[KubeObject]
    # One row per allocation result: {request, subrequest, driver, pool, device, adminAccess, shareID,
    # consumedCapacity, tolerations, status: {conditions, networkData, data} | None}
    results: list[JSON]
    requests: list[JSON]
    # For the scheduler's extended-resource claim: the owning pod and, from its
    # status.extendedResourceClaimStatus, which container's extended resource each request serves.
    owner_pod: KubeObject | None = None
    extended_resources: list[JSON] = field(default_factory=list)


def claim_detail(*, namespace: str, name: str, reveal: bool = False) -> ClaimDetail:
    """The claim with its results; the drivers' device status data redacted unless `reveal` (admins)."""
    obj = KubeObject.objects.get(kind="resourceclaims", namespace=namespace, name=name)
    claim = Claim.objects.get(uid=obj.uid)
    status = obj.raw.get("status") or {}
    allocation = status.get("allocation") or {}
    device_status = {
        (d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID") or ""): d
        for d in status.get("devices") or []
    }
    results: list[JSON] = []
    q = Q(pk__in=[])
    for result in (allocation.get("devices") or {}).get("results") or []:
        main, _, sub = str(result.get("request", "")).partition("/")
        key = (result.get("driver"), result.get("pool"), result.get("device"), result.get("shareID") or "")
        entry = device_status.get(key)
        results.append(
            {
                "request": main,
                "subrequest": sub,
                "driver": result.get("driver"),
                "pool": result.get("pool"),
                "device": result.get("device"),
                "adminAccess": bool(result.get("adminAccess")),
                "shareID": result.get("shareID") or "",
                "consumedCapacity": result.get("consumedCapacity") or {},
                "tolerations": result.get("tolerations") or [],
                "status": device_status_view(entry if reveal else redact_device_status(entry))
                if entry
                else None,
            }
        )
        q |= Q(driver=result.get("driver"), pool=result.get("pool"), name=result.get("device"))
    devices = list(Device.objects.filter(q))
    pod_uids = [r.get("uid") for r in status.get("reservedFor") or [] if r.get("resource") == "pods"]
    pods = list(KubeObject.objects.filter(kind="pods", uid__in=pod_uids))
    requests = list(((obj.raw.get("spec") or {}).get("devices") or {}).get("requests") or [])
    owner = (
        KubeObject.objects.filter(kind="pods", namespace=namespace, name=claim.owner_pod).first()
        if claim.owner_pod
        else None
    )
    extended: list[JSON] = []
    if owner is not None:
        mapping = (owner.raw.get("status") or {}).get("extendedResourceClaimStatus") or {}
        if mapping.get("resourceClaimName") == name:
            extended = [
                {
                    "containerName": clip(m.get("containerName"), 253),
                    "resourceName": clip(m.get("resourceName"), 316),
                    "requestName": clip(m.get("requestName"), 253),
                }
                for m in mapping.get("requestMappings") or []
            ]
    return ClaimDetail(
        claim=claim,
        obj=obj,
        devices=devices,
        pods=pods,
        results=results,
        requests=requests,
        owner_pod=owner,
        extended_resources=extended,
    )


def device_status_view(entry: Mapping[str, Any]) -> JSON:
    """claim.status.devices[] entry with its untrusted strings capped."""
    network = entry.get("networkData") or {}
    data = entry.get("data")
    return {
        "conditions": [
            {
                "type": clip(c.get("type"), 316),
                "status": clip(c.get("status"), 16),
                "reason": clip(c.get("reason"), 1024),
                "message": clip(c.get("message")),
                "lastTransitionTime": clip(c.get("lastTransitionTime"), 40),
            }
            for c in entry.get("conditions") or []
        ],
        "networkData": {
            "interfaceName": clip(network.get("interfaceName"), 256),
            "hardwareAddress": clip(network.get("hardwareAddress"), 128),
            "ips": [clip(ip, 64) for ip in network.get("ips") or []],
        }
        if network
        else None,
        "data": clip(yaml.safe_dump(data, default_flow_style=False, sort_keys=True))
        if data is not None
        else "",
    }


def claim_state_counts() -> dict[str, int]:
    counts = dict(Claim.objects.values_list("state").annotate(n=Count("id")).values_list("state", "n"))
    return {state: counts.get(state, 0) for state in ("pending", "allocated", "reserved")}
