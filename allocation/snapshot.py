"""The one bridge from inventory rows to allocator input.

A `Snapshot` is a consistent-enough, read-only picture of the mirror: every object of the kinds the
allocator and the what-if services need, as the cluster served them (raw JSON), plus the
resourceVersion each kind's watch had reached, so a run can say which state it answered about.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Q, TextField
from django.db.models.functions import Cast

from dra.allocator import DEFAULT_FEATURES as ALLOCATOR_DEFAULT_FEATURES
from dra.extended import device_plugin_holdings
from dra.kinds import BY_KIND
from dradash import fastjson
from inventory.kube import MIRRORED_KINDS
from inventory.mirror.writer import bulk_gc
from inventory.models import KubeObject, WatchState

Obj = dict[str, Any]

# What the scheduler of a 1.37 cluster uses, so that is what the what-if uses (dra-api.md §11).
DEFAULT_FEATURES: frozenset[str] = frozenset(ALLOCATOR_DEFAULT_FEATURES)

#: What a what-if reads: every mirrored kind but the pool status requests.
KINDS = tuple(k for k in MIRRORED_KINDS if k != "resourcepoolstatusrequests")


@dataclass(frozen=True)
class Snapshot:
    classes: list[Obj] = field(default_factory=list)
    slices: list[Obj] = field(default_factory=list)
    claims: list[Obj] = field(default_factory=list)
    templates: list[Obj] = field(default_factory=list)
    taint_rules: list[Obj] = field(default_factory=list)
    pods: list[Obj] = field(default_factory=list)
    nodes: list[Obj] = field(default_factory=list)
    pdbs: list[Obj] = field(default_factory=list)
    resource_versions: dict[str, str] = field(default_factory=dict)
    features: frozenset[str] = DEFAULT_FEATURES
    #: derived tables computed once per snapshot (see `plugin_use`)
    memo: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def plugin_use(self, *, excluding_uid: str = "") -> dict[tuple[str, str], int]:
        """(node, resource) → the node's device-plugin devices its pods hold (`dra.extended.device_plugin_holdings`),
        without what the pod `excluding_uid` holds (a pod does not compete with itself)."""
        if "plugin_use" not in self.memo:
            nodes = {str((n.get("metadata") or {}).get("name", "")): n for n in self.nodes}
            holdings = device_plugin_holdings(self.pods, nodes)
            totals: dict[tuple[str, str], int] = {}
            for use in holdings.values():
                for key, count in use.items():
                    totals[key] = totals.get(key, 0) + count
            self.memo["plugin_use"] = (totals, holdings)
        totals, holdings = self.memo["plugin_use"]
        own = holdings.get(excluding_uid) if excluding_uid else None
        if not own:
            return dict(totals)
        return {key: count - own.get(key, 0) for key, count in totals.items()}

    @property
    def allocated_claims(self) -> list[Obj]:
        return [c for c in self.claims if (c.get("status") or {}).get("allocation")]

    def find(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The object of `kind` (a Kubernetes kind name) called namespace/name, or None."""
        objects = {
            "ResourceClaim": self.claims,
            "ResourceClaimTemplate": self.templates,
            "Pod": self.pods,
            "DeviceClass": self.classes,
            "Node": self.nodes,
        }[kind]
        for obj in objects:
            meta = obj.get("metadata") or {}
            if meta.get("name") == name and (meta.get("namespace") or "") == (namespace or ""):
                return obj
        return None


def snapshot_from_objects(
    objects: Mapping[str, Iterable[Obj]],
    *,
    resource_versions: Mapping[str, str] | None = None,
    features: frozenset[str] = DEFAULT_FEATURES,
) -> Snapshot:
    """A snapshot from raw objects keyed by plural kind (for benchmarks and callers outside the DB)."""
    return Snapshot(
        classes=list(objects.get("deviceclasses", ())),
        slices=list(objects.get("resourceslices", ())),
        claims=list(objects.get("resourceclaims", ())),
        templates=list(objects.get("resourceclaimtemplates", ())),
        taint_rules=list(objects.get("devicetaintrules", ())),
        pods=list(objects.get("pods", ())),
        nodes=list(objects.get("nodes", ())),
        pdbs=list(objects.get("poddisruptionbudgets", ())),
        resource_versions=dict(resource_versions or {}),
        features=features,
    )


@dataclass
class _KindCache:
    """One kind's objects as last read: uid → (namespace, name, raw), the newest write and highest id
    seen, and the objects in (namespace, name) order as the snapshot lists them."""

    objects: dict[str, tuple[str, str, Obj]] = field(default_factory=dict)
    newest: datetime | None = None
    last_id: int = 0
    ordered: list[Obj] = field(default_factory=list)


_cache_lock = threading.Lock()
_kinds: dict[str, _KindCache] = {}
_cached: tuple[Any, Snapshot] | None = None


def snapshot_load(*, features: frozenset[str] | None = None) -> Snapshot:
    """Read the mirror: all objects of the kinds in KINDS, and each kind's watch resourceVersion.

    Versions are read first, in the same transaction, so they never claim a newer state than the
    objects show. The objects are kept per process and brought up to date incrementally: per kind,
    only rows written since the last load (`mirrored_at`, indexed) or inserted since (`id`) are read
    and decoded, and the kind's uids only when its row count says something was deleted. One changed
    claim at 100,000 devices costs a few small queries, not decoding every slice again. This relies on
    the mirror being the one writer, stamping each batch with its time. Callers must not modify the
    snapshot's objects.
    ``features`` defaults to the cluster's gates as configured (DRADASH_FEATURES).
    """
    global _cached
    if features is None:
        features = frozenset(settings.DRADASH_FEATURES)
    with transaction.atomic():
        versions = {
            kind: rv
            for kind, rv in WatchState.objects.filter(kind__in=KINDS).values_list("kind", "resource_version")
        }
        with _cache_lock, bulk_gc(collect=False):
            # The collector paused while rows are decoded, then what survives frozen: full collections
            # during a run would otherwise walk the whole inventory again (measured: most of a warm
            # feasibility answer at 30,000 devices). Decoding makes no cycles: no collection after.
            changed = [kind for kind in KINDS if _refresh_kind(kind)]
            state = (features, tuple(sorted(versions.items())))
            if not changed and _cached is not None and _cached[0] == state:
                return _cached[1]
            by_kind = {kind: _kinds[kind].ordered for kind in KINDS}
            snapshot = snapshot_from_objects(by_kind, resource_versions=versions, features=features)
            _cached = (state, snapshot)
    return snapshot


def _refresh_kind(kind: str) -> bool:
    """Bring the cache of one kind up to date; True when anything changed."""
    rows = KubeObject.objects.filter(kind=kind).order_by()
    numbers = rows.aggregate(n=Count("id"), newest=Max("mirrored_at"), last_id=Max("id"))
    cache = _kinds.setdefault(kind, _KindCache())
    if (
        numbers["n"] == len(cache.objects)
        and numbers["newest"] == cache.newest
        and (numbers["last_id"] or 0) == cache.last_id
    ):
        return False
    fresh = rows
    if cache.newest is not None:
        # >= : a batch stamped with the same instant as the last one seen is read again (idempotent).
        fresh = rows.filter(Q(mirrored_at__gte=cache.newest) | Q(id__gt=cache.last_id))
    # The column as text, decoded here by orjson (faster than the driver's json.loads, and it shares
    # one str per repeated key), then trimmed to what a what-if reads (`compact`).
    shared: dict[Any, Any] = {}
    text = Cast("raw", TextField())
    for uid, namespace, name, raw in (
        fresh.annotate(text=text).values_list("uid", "namespace", "name", "text").iterator(chunk_size=2000)
    ):
        cache.objects[uid] = (namespace, name, compact(kind, fastjson.loads(raw), shared))
    if len(cache.objects) != numbers["n"]:
        live = set(rows.values_list("uid", flat=True))
        for uid in [u for u in cache.objects if u not in live]:
            del cache.objects[uid]
    cache.newest = numbers["newest"]
    cache.last_id = numbers["last_id"] or 0
    cache.ordered = [raw for _ns, _name, raw in sorted(cache.objects.values(), key=lambda t: (t[0], t[1]))]
    return True


# What no what-if reads, dropped as rows are decoded: the snapshot is held by every worker process,
# and these fields are most of a real object (managedFields, the last-applied annotation, container
# images, env and probes, a node's image list and conditions). Kept: every field some reader in
# allocation/ or dra/ asks for (the allocator, dra.extended, the subject, taint impact).
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_CONTAINER_FIELDS = ("name", "resources", "restartPolicy")
_POD_STATUS_FIELDS = ("phase", "conditions", "resourceClaimStatuses", "extendedResourceClaimStatus")
_NODE_STATUS_FIELDS = ("allocatable", "capacity")


def compact(kind: str, obj: Obj, shared: dict[Any, Any]) -> Obj:
    """`obj` (just decoded, not shared yet) without the fields no what-if reads, in place.

    A slice's device attribute and capacity values are mostly the same few small dicts on every
    device ({"string": "H100"}, {"value": "80Gi"}): equal ones become one object, looked up in
    `shared` (snapshot objects are read-only)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(_LAST_APPLIED, None)
    spec, status = obj.get("spec"), obj.get("status")
    if kind == "resourceslices" and isinstance(spec, dict):
        for device in spec.get("devices") or ():
            if isinstance(device, dict):
                for part in ("attributes", "capacity"):
                    values = device.get(part)
                    if isinstance(values, dict):
                        device[part] = _shared(values, shared)
    elif kind == "pods" and isinstance(spec, dict):
        for part in ("initContainers", "containers"):
            containers = spec.get(part)
            if isinstance(containers, list):
                spec[part] = [
                    {k: c[k] for k in _CONTAINER_FIELDS if k in c} if isinstance(c, dict) else c
                    for c in containers
                ]
        spec.pop("volumes", None)
        spec.pop("ephemeralContainers", None)
        if isinstance(status, dict):
            obj["status"] = {k: status[k] for k in _POD_STATUS_FIELDS if k in status}
    elif kind == "nodes" and isinstance(status, dict):
        obj["status"] = {k: status[k] for k in _NODE_STATUS_FIELDS if k in status}
    return obj


def _shared(values: dict[str, Any], shared: dict[Any, Any]) -> dict[str, Any]:
    """`values` with each one-entry dict of a str or int (not bool: True == 1) replaced by the
    first equal one seen: one object for {"string": "H100"} on every device."""
    out = {}
    for name, value in values.items():
        if type(value) is dict and len(value) == 1:
            ((tag, scalar),) = value.items()
            if type(scalar) is str or type(scalar) is int:
                value = shared.setdefault((tag, scalar), value)
        out[name] = value
    return out


class MirrorLookup:
    """The mirror one object at a time, for checks at submit time: a web request must not decode the
    whole inventory (that is the worker's job), so each question reads only the rows it names."""

    def find(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The object of `kind` (a Kubernetes kind name such as "DeviceClass") or None."""
        plural = BY_KIND[kind].plural
        raw = (
            KubeObject.objects.filter(kind=plural, namespace=namespace or "", name=name)
            .values_list("raw", flat=True)
            .first()
        )
        return raw if isinstance(raw, dict) else None
