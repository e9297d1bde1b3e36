"""The one bridge from inventory rows to allocator input.

A `Snapshot` is a consistent-enough, read-only picture of the mirror: every object of the kinds the
allocator and the what-if services need, as the cluster served them (raw JSON), plus the
resourceVersion each kind's watch had reached, so a run can say which state it answered about.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max

from dra.allocator import DEFAULT_FEATURES as ALLOCATOR_DEFAULT_FEATURES
from dra.kinds import BY_KIND
from inventory.kube import MIRRORED_KINDS
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


_cache_lock = threading.Lock()
_cached: tuple[Any, Snapshot] | None = None


def snapshot_load(*, features: frozenset[str] | None = None) -> Snapshot:
    """Read the mirror: all objects of the kinds in KINDS, and each kind's watch resourceVersion.

    Versions are read first, in the same transaction, so they never claim a newer state than the
    objects show. The last snapshot is kept per process and reused while nothing in the mirror has
    changed (same rows per kind, same newest write, same watch versions): decoding 10,000 devices'
    JSON is most of what a what-if costs. Callers must not modify the snapshot's objects.
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
        state = (
            features,
            tuple(sorted(versions.items())),
            tuple(
                KubeObject.objects.filter(kind__in=KINDS)
                .values_list("kind")
                .annotate(n=Count("id"), newest=Max("mirrored_at"), last_id=Max("id"))
                .order_by("kind")
            ),
        )
        with _cache_lock:
            if _cached is not None and _cached[0] == state:
                return _cached[1]
        by_kind: dict[str, list[Obj]] = defaultdict(list)
        rows = KubeObject.objects.filter(kind__in=KINDS).order_by("kind", "namespace", "name")
        for kind, raw in rows.values_list("kind", "raw").iterator(chunk_size=2000):
            by_kind[kind].append(raw)
    snapshot = snapshot_from_objects(by_kind, resource_versions=versions, features=features)
    with _cache_lock:
        _cached = (state, snapshot)
    return snapshot


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
