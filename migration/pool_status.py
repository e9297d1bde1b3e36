"""Pool availability snapshots: ResourcePoolStatusRequest (resource.k8s.io/v1alpha3, gate DRAResourcePoolStatus,
KEP-5677; dra-api.md §4). A request is one-shot: a controller fills `status` once and never again, so to
refresh one creates it anew and then deletes the old one (`pool_status_refresh`).

Writes (services) go through `inventory.kube` as the logged-in user when impersonation is on (the cluster's
RBAC decides, its audit log names them), like DeviceTaintRule writes; reads (selectors) come from the mirror,
which lists and watches the kind, and set dradash's own figures beside the controller's: the Pool and
Device rows and the allocator's per-class `free` (`ClassAvailability`, `dra.availability`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q

from dra.names import dns1123_subdomain_errors, fully_qualified_attribute_errors, pool_name_errors
from inventory.access import cluster_client, kube_identity
from inventory.kube import KubeError
from inventory.models import FREE, ClassAvailability, Device, KubeObject, Pool

JSON = dict[str, Any]
KIND = "resourcepoolstatusrequests"
API_VERSION = "resource.k8s.io/v1alpha3"
GATE = "DRAResourcePoolStatus"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
GENERATE_NAME = "dradash-"


class PoolStatusInputError(ValueError):
    """Bad input: every field's error (`errors`, in the form's order); `field`/`message` are the first."""

    def __init__(self, field: str, message: str, *, more: list[tuple[str, str]] | None = None) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.errors = [(field, message), *(more or [])]


class PoolStatusWriteError(Exception):
    """The cluster refused (or could not be reached); `status` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _call(method: str, *args: Any, verb: str, user: Any, **kwargs: Any) -> Any:
    identity = kube_identity(user)
    if identity is not None:
        kwargs["as_user"] = identity
    try:
        return getattr(cluster_client(), method)(*args, **kwargs)
    except KubeError as error:
        if error.status == 403 and identity is not None:
            raise PoolStatusWriteError(
                403, f"Kubernetes denied: {identity.user} cannot {verb} {KIND}"
            ) from error
        if error.status == 404 and verb == "create":
            raise PoolStatusWriteError(
                404, f"the cluster does not serve {API_VERSION} {KIND} (is the {GATE} feature gate on?)"
            ) from error
        if error.status == 0:  # no kubeconfig, or the API server cannot be reached
            raise PoolStatusWriteError(503, f"cannot reach the Kubernetes API: {error.message}") from error
        raise PoolStatusWriteError(error.status, error.message) from error
    except OSError as error:
        raise PoolStatusWriteError(503, f"cannot reach the Kubernetes API: {error}") from error


def _whole_number(value: Any) -> int | None:
    """An int (not a bool), or a string of decimal digits, as an int; None for anything else. Not int():
    it truncates 1.9 to 1 and reads "1_0" as 10, " 5" as 5 and Arabic-Indic digits as theirs."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= 12 and re.fullmatch("[0-9]+", value):
        return int(value)
    return None


def pool_status_spec(
    *, driver: Any, pool: Any = "", limit: Any = None, partition_attribute: Any = ""
) -> JSON:
    """The request's spec, checked as the API server would (field names in the errors); every field is
    checked, and all their errors are raised together."""
    errors: list[tuple[str, str]] = []
    spec: JSON = {}
    if driver is not None and not isinstance(driver, str):
        errors.append(("driver", f"must be a string (a driver name), got {type(driver).__name__}"))
    elif not isinstance(driver, str) or not driver.strip():
        errors.append(("driver", "is required — the driver whose pools to summarize"))
    elif problems := dns1123_subdomain_errors(driver.strip()):
        errors.append(("driver", problems[0]))
    else:
        spec["driver"] = driver.strip()
    if pool not in (None, ""):
        if not isinstance(pool, str):
            errors.append(("poolName", "must be a string"))
        elif problems := pool_name_errors(pool.strip()):
            errors.append(("poolName", problems[0]))
        else:
            spec["poolName"] = pool.strip()
    if limit not in (None, ""):
        value = _whole_number(limit)
        if value is None or not 1 <= value <= MAX_LIMIT:
            shown = repr(str(limit)[:40])
            errors.append(("limit", f"must be between 1 and {MAX_LIMIT} in decimal digits, got {shown}"))
        else:
            spec["limit"] = value
    if partition_attribute not in (None, ""):
        if not isinstance(partition_attribute, str):
            errors.append(("defaultPartitionTypeAttribute", "must be a string"))
        elif problems := fully_qualified_attribute_errors(partition_attribute.strip()):
            errors.append(("defaultPartitionTypeAttribute", problems[0]))
        else:
            spec["defaultPartitionTypeAttribute"] = partition_attribute.strip()
    if errors:
        raise PoolStatusInputError(*errors[0], more=errors[1:])
    return spec


def pool_status_create(
    *, driver: Any, pool: Any = "", limit: Any = None, partition_attribute: Any = "", user: Any
) -> JSON:
    """Create a ResourcePoolStatusRequest (named by the API server from `dradash-`)."""
    spec = pool_status_spec(driver=driver, pool=pool, limit=limit, partition_attribute=partition_attribute)
    body = {
        "apiVersion": API_VERSION,
        "kind": "ResourcePoolStatusRequest",
        "metadata": {"generateName": GENERATE_NAME, "labels": {"app.kubernetes.io/managed-by": "dradash"}},
        "spec": spec,
    }
    created: JSON = _call("create_object", KIND, body, verb="create", user=user)
    return created


def _mirrored(name: str) -> KubeObject:
    obj = KubeObject.objects.filter(kind=KIND, name=name).first()
    if obj is None:
        raise PoolStatusWriteError(404, f"no ResourcePoolStatusRequest {name} in the inventory")
    return obj


def pool_status_delete(*, name: str, user: Any) -> None:
    """Delete a request the inventory knows (uid precondition: not a newer one of the same name)."""
    obj = _mirrored(name)
    _call("delete_object", KIND, name, uid=obj.uid or None, verb="delete", user=user)


def pool_status_refresh(*, name: str, user: Any) -> JSON:
    """Create a request with the same spec (its status is computed anew), then delete the old one: a create
    that fails leaves the old request and its result as they were. The new one has a new name (generateName),
    so both can exist for a moment."""
    old = _mirrored(name)
    spec = (old.raw or {}).get("spec") or {}
    created = pool_status_create(
        driver=spec.get("driver"), pool=spec.get("poolName", ""), limit=spec.get("limit"),
        partition_attribute=spec.get("defaultPartitionTypeAttribute", ""), user=user,
    )  # fmt: skip
    try:
        _call("delete_object", KIND, name, uid=old.uid or None, verb="delete", user=user)
    except PoolStatusWriteError as error:
        if error.status == 404:  # deleted meanwhile: what a refresh wanted
            return created
        new = (created.get("metadata") or {}).get("name", "")
        raise PoolStatusWriteError(
            error.status, f"created {new} but could not delete {name}, which stays: {error.message}"
        ) from error
    return created


# --------------------------------------------------------------------------- reads


@dataclass
class OurFigures:
    """dradash's own numbers for one pool, from the mirror."""

    found: bool
    generation: int = 0
    slices: int = 0
    complete: bool = False
    total: int = 0
    allocated: int = 0
    #: unallocated devices that cannot be given (tainted, counters used, …), per the mirror's `blocked`
    unavailable: int = 0
    available: int = 0
    #: the allocator's `free` per DeviceClass (ClassAvailability)
    free_by_class: dict[str, int] = field(default_factory=dict)


@dataclass
class PoolRow:
    entry: JSON
    ours: OurFigures
    #: "field: theirs vs ours" where the snapshot and the mirror disagree
    differences: list[str] = field(default_factory=list)


@dataclass
class Snapshot:
    name: str
    uid: str
    created: str
    spec: JSON
    status: JSON | None
    rows: list[PoolRow] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.status is not None

    @property
    def conditions(self) -> list[JSON]:
        return list((self.status or {}).get("conditions") or [])

    @property
    def partitions(self) -> list[JSON]:
        """Every pool's partitionSummary rows (DRAPartitionableDevicesType), pool by pool."""
        return [
            {"pool": r.entry.get("poolName"), **p}
            for r in self.rows
            for p in r.entry.get("partitionSummary") or []
            if isinstance(p, dict)
        ]

    @property
    def shareable(self) -> list[JSON]:
        """The pools with a shareableSummary (devices with allowMultipleAllocations)."""
        return [
            {"pool": r.entry.get("poolName"), "summary": r.entry["shareableSummary"]}
            for r in self.rows
            if isinstance(r.entry.get("shareableSummary"), dict)
        ]

    @property
    def truncated(self) -> bool:
        status = self.status or {}
        return len(status.get("pools") or []) < int(status.get("poolCount") or 0)


def _our_figures(keys: set[tuple[str, str]]) -> dict[tuple[str, str], OurFigures]:
    out: dict[tuple[str, str], OurFigures] = {}
    if not keys:
        return out
    drivers = {d for d, _ in keys}
    pools = {p for _, p in keys}
    for row in Pool.objects.filter(driver__in=drivers, name__in=pools):
        if (row.driver, row.name) in keys:
            out[(row.driver, row.name)] = OurFigures(
                found=True,
                generation=row.generation,
                slices=row.slice_count,
                complete=row.complete,
            )
    counts = (
        Device.objects.filter(driver__in=drivers, pool__in=pools)
        .values("driver", "pool")
        .annotate(
            total=Count("id"),
            allocated=Count("id", filter=~Q(allocation_state=FREE)),
            blocked=Count("id", filter=Q(allocation_state=FREE) & ~Q(blocked="")),
        )
    )
    for c in counts:
        ours = out.get((c["driver"], c["pool"]))
        if ours is None:
            continue
        ours.total, ours.allocated, ours.unavailable = c["total"], c["allocated"], c["blocked"]
        ours.available = ours.total - ours.allocated - ours.unavailable
    free: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for a in ClassAvailability.objects.filter(driver__in=drivers, pool__in=pools).order_by("device_class"):
        free[(a.driver, a.pool)][a.device_class] = a.free
    for key, ours in out.items():
        ours.free_by_class = free.get(key, {})
    return out


def _differences(entry: JSON, ours: OurFigures) -> list[str]:
    if not ours.found:
        return ["pool not in dradash's inventory"]
    pairs = [("generation", ours.generation)]
    if "validationError" not in entry:
        pairs += [
            ("totalDevices", ours.total),
            ("allocatedDevices", ours.allocated),
            ("unavailableDevices", ours.unavailable),
            ("availableDevices", ours.available),
        ]
    return [
        f"{name}: {entry.get(name)} in the snapshot, {value} in dradash"
        for name, value in pairs
        if name in entry and entry.get(name) != value
    ]


def pool_status_snapshots() -> list[Snapshot]:
    """Every mirrored ResourcePoolStatusRequest, newest first, each pool beside dradash's figures."""
    rows = list(KubeObject.objects.filter(kind=KIND).order_by("-creation_timestamp", "name"))
    snapshots = [
        Snapshot(
            name=r.name,
            uid=r.uid,
            created=r.creation_timestamp,
            spec=dict((r.raw or {}).get("spec") or {}),
            status=(r.raw or {}).get("status") or None,
        )
        for r in rows
    ]
    keys = {
        (str(p.get("driver")), str(p.get("poolName")))
        for s in snapshots
        for p in (s.status or {}).get("pools") or []
    }
    ours = _our_figures(keys)
    for s in snapshots:
        for entry in (s.status or {}).get("pools") or []:
            figures = ours.get((str(entry.get("driver")), str(entry.get("poolName")))) or OurFigures(
                found=False
            )
            s.rows.append(PoolRow(entry=entry, ours=figures, differences=_differences(entry, figures)))
    return snapshots


def pool_status_drivers() -> list[str]:
    """Drivers with pools in the inventory (the form's choices)."""
    return list(Pool.objects.order_by("driver").values_list("driver", flat=True).distinct())


def snapshot_json(s: Snapshot) -> JSON:
    return {
        "name": s.name,
        "uid": s.uid,
        "created": s.created,
        "spec": s.spec,
        "complete": s.complete,
        "truncated": s.truncated,
        "status": s.status,
        "comparison": [
            {
                "driver": r.entry.get("driver"),
                "poolName": r.entry.get("poolName"),
                "snapshot": r.entry,
                "dradash": {
                    "found": r.ours.found,
                    "generation": r.ours.generation,
                    "totalDevices": r.ours.total,
                    "allocatedDevices": r.ours.allocated,
                    "unavailableDevices": r.ours.unavailable,
                    "availableDevices": r.ours.available,
                    "freeByClass": r.ours.free_by_class,
                },
                "differences": r.differences,
            }
            for r in s.rows
        ],
    }
