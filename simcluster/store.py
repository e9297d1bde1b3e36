"""The in-memory object store: one global resourceVersion counter, a bounded event history for watch
resume, and the write semantics of a kube-apiserver registry (status split, generation, finalizers,
preconditions, defaulting, validation).

Controllers call it directly from their own threads; the HTTP server calls the same methods. Every
committed object is kept both as a dict (never mutated after commit) and as its JSON bytes, so lists and
watches send cached bytes instead of re-serializing.
"""

from __future__ import annotations

import builtins
import contextlib
import heapq
import logging
import random
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sortedcontainers import SortedDict

from dra.allocator.features import DEFAULT_FEATURES
from dra.taints import parse_time
from simcluster import defaulting, patching, validation
from simcluster.errors import (
    ApiError,
    already_exists,
    bad_request,
    conflict,
    expired,
    invalid,
    namespace_not_found,
    namespace_terminating,
    not_found,
    resource_not_found,
    resource_version_required,
)
from simcluster.jsondata import clone, decode, dumps
from simcluster.namespaces import (
    KUBERNETES_FINALIZER,
    ROOT_CA_CONFIG_MAP,
    TERMINATING,
    is_terminating,
    root_ca_config_map,
    root_ca_repaired,
    spec_finalizers,
)
from simcluster.resources import ResourceDef, resource_for
from simcluster.schema import canonical_quantities, drop_empty_collections

__all__ = [
    "CREATE_ON_UPDATE",
    "FOREGROUND_FINALIZER",
    "ORPHAN_FINALIZER",
    "PROPAGATION_POLICIES",
    "Admission",
    "ApiError",
    "Entry",
    "Page",
    "Store",
    "WatchEvent",
]

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# generateName suffixes (as kube's utilrand.String) and UIDs (random version-4 UUIDs, as kube's): not secrets, so
# not a system call each (SystemRandom was a tenth of a burst's controller time; uuid4's urandom, made under the
# store lock, let go of the GIL and kept every other writer waiting for it).
_RANDOM = random.Random()
#: kube-apiserver's maxNameGenerationCreateAttempts: tries of a generateName create before AlreadyExists
_GENERATE_NAME_ATTEMPTS = 8
_METADATA_ORDER = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
_IMMUTABLE_SPEC = {"resourceclaims", "resourceclaimtemplates", "resourcepoolstatusrequests"}
_KUBERNETES_SERVICE: Obj = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {
        "name": "kubernetes",
        "namespace": "default",
        "labels": {"component": "apiserver", "provider": "kubernetes"},
    },
    "spec": {
        "type": "ClusterIP",
        "clusterIP": "10.96.0.1",
        "clusterIPs": ["10.96.0.1"],
        "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}],
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    },
}
#: Where the API server says it is reachable from inside the cluster (kube-apiserver's --advertise-address and
#: --secure-port, the Service's targetPort): an address of the control plane, which no topology node takes (they
#: start at 10.0.1.1). The clients outside reach simcluster where it listens, as kind's do through a mapped port.
APISERVER_ADVERTISE_ADDRESS = "10.0.0.2"
APISERVER_SECURE_PORT = 6443
#: What kube-apiserver's endpoint reconciler keeps for the `kubernetes` Service (the lease reconciler's
#: endpointsadapter writes both kinds; Endpoints carry skip-mirror so the EndpointSlice mirroring leaves them).
_KUBERNETES_ENDPOINTS: Obj = {
    "apiVersion": "v1",
    "kind": "Endpoints",
    "metadata": {
        "name": "kubernetes",
        "namespace": "default",
        "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"},
    },
    "subsets": [
        {
            "addresses": [{"ip": APISERVER_ADVERTISE_ADDRESS}],
            "ports": [{"name": "https", "port": APISERVER_SECURE_PORT, "protocol": "TCP"}],
        }
    ],
}
_KUBERNETES_ENDPOINT_SLICE: Obj = {
    "apiVersion": "discovery.k8s.io/v1",
    "kind": "EndpointSlice",
    "metadata": {
        "name": "kubernetes",
        "namespace": "default",
        "labels": {"kubernetes.io/service-name": "kubernetes"},
    },
    "addressType": "IPv4",
    "endpoints": [{"addresses": [APISERVER_ADVERTISE_ADDRESS], "conditions": {"ready": True}}],
    "ports": [{"name": "https", "port": APISERVER_SECURE_PORT, "protocol": "TCP"}],
}
#: plural → (the reconciled object, the fields the reconciler owns)
_APISERVER_ENDPOINTS: dict[str, tuple[Obj, tuple[str, ...]]] = {
    "endpoints": (_KUBERNETES_ENDPOINTS, ("subsets",)),
    "endpointslices": (_KUBERNETES_ENDPOINT_SLICE, ("addressType", "endpoints", "ports")),
}
_IMMUTABLE_SPEC_CAUSE = {
    "reason": "FieldValueInvalid",
    "message": 'Invalid value: "object": field is immutable',
    "field": "spec",
}
#: Kinds whose registry strategy never sets metadata.generation (kube-apiserver leaves it out).
_WITHOUT_GENERATION = frozenset({
    ("", "events"), ("", "namespaces"), ("", "nodes"), ("", "services"), ("", "configmaps"), ("", "secrets"),
    ("", "serviceaccounts"), ("", "endpoints"), ("", "persistentvolumeclaims"), ("", "persistentvolumes"),
    ("apps", "controllerrevisions"), ("coordination.k8s.io", "leases"), ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "clusterroles"), ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
    # of the DRA kinds only DeviceClass, ResourceSlice and DeviceTaintRule count their spec's changes
    ("resource.k8s.io", "resourceclaims"), ("resource.k8s.io", "resourceclaimtemplates"),
})  # fmt: skip
#: The garbage collector's finalizers: a DELETE with propagationPolicy Orphan or Foreground leaves one.
ORPHAN_FINALIZER = "orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
#: Kinds whose registry never leaves a garbage-collection finalizer (DefaultGarbageCollectionPolicy
#: Unsupported: Events).
_WITHOUT_GARBAGE_COLLECTION = frozenset({("", "events")})
#: Kinds whose registry orphans the dependents of a DELETE that names no policy: batch/v1 Jobs and v1
#: ReplicationControllers keep the behaviour of their first version (DefaultGarbageCollectionPolicy
#: OrphanDependents), which is why kubectl always sends propagationPolicy.
_ORPHANS_BY_DEFAULT = frozenset({("batch", "jobs"), ("", "replicationcontrollers")})
#: Kinds whose registry strategy refuses a PUT without metadata.resourceVersion (AllowUnconditionalUpdate
#: false: DeviceTaintRule from v1 on, Lease).
_CONDITIONAL_UPDATES_ONLY = frozenset(
    {("resource.k8s.io", "devicetaintrules"), ("coordination.k8s.io", "leases")}
)
#: Kinds whose registry strategy creates the object a PUT names when it does not exist (AllowCreateOnUpdate).
CREATE_ON_UPDATE = frozenset({("coordination.k8s.io", "leases")})
_STATUS_CLEARED_ON_CREATE = {
    "services",
    "resourceclaims",
    "devicetaintrules",
    "resourcepoolstatusrequests",
    "poddisruptionbudgets",
    "replicasets",
    "deployments",
    "jobs",
    "replicationcontrollers",
    "persistentvolumeclaims",
    "persistentvolumes",
    "daemonsets",
    "statefulsets",
    "cronjobs",
    "ingresses",
}


class Admission(Protocol):
    """An admission check (upstream's admission plugins): `operation` is CREATE, UPDATE or DELETE; `obj` is
    the object to be written (None for a DELETE), `old` the stored one (None for a CREATE), `subresource`
    the written subresource (`status`, `binding`) or None."""

    def __call__(
        self, operation: str, resource: ResourceDef, obj: Obj | None, old: Obj | None, subresource: str | None
    ) -> None: ...


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Deletion:
    """What a DELETE did: the object (as removed, or as marked and kept) and whether it went at once."""

    obj: Obj
    removed: bool


@dataclass(frozen=True, slots=True)
class Entry:
    """A committed object: the dict must never be mutated; `raw` is its JSON."""

    obj: Obj
    raw: bytes
    rv: int


@dataclass(frozen=True, slots=True)
class WatchEvent:
    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    plural: str
    key: Key
    entry: Entry
    old: Entry | None


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a list: the entries in key order, whether more follow, and how many (None once a
    matcher filtered: unknown without reading the rest, as kube says)."""

    rv: int
    entries: builtins.list[Entry]
    more: bool
    remaining: int | None


Deliver = Callable[[WatchEvent], None]
Subscriber = Callable[[str, str, Obj], None]


class StoreLock:
    """The store's reentrant lock. Work handed to `after_release` by the thread holding it runs once that
    thread has let go of its outermost hold: waking a watch's event loop is a system call, which lets go of
    the GIL; made under this lock, every other writer and reader waited through the hand-off."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._depth = 0
        self._after: builtins.list[Callable[[], None]] = []

    def __enter__(self) -> StoreLock:
        self._lock.acquire()
        self._owner = threading.get_ident()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth:
            self._lock.release()
            return
        self._owner = None
        after, self._after = self._after, []
        self._lock.release()
        for work in after:
            try:
                work()
            except Exception:  # one failing wake-up must not keep the others from running
                log.exception("work after the store lock failed")

    def after_release(self, work: Callable[[], None]) -> None:
        """Run `work` when this thread lets go of the lock; now if it does not hold it."""
        if self._owner == threading.get_ident():
            self._after.append(work)
        else:
            work()


class _Watcher:
    __slots__ = ("deliver", "namespace", "plural")

    def __init__(self, plural: str, namespace: str | None, deliver: Deliver) -> None:
        self.plural = plural
        self.namespace = namespace
        self.deliver = deliver


#: Kinds whose status is a Go struct (not a pointer), so never omitted: unwritten, it reads `status: {}`.
_STRUCT_STATUS = frozenset({
    ("", "pods"), ("", "nodes"), ("", "namespaces"), ("", "services"), ("policy", "poddisruptionbudgets"),
    ("apps", "deployments"), ("apps", "replicasets"), ("batch", "jobs"), ("resource.k8s.io", "resourceclaims"),
    ("resource.k8s.io", "devicetaintrules"), ("", "replicationcontrollers"), ("", "persistentvolumeclaims"),
    ("", "persistentvolumes"), ("apps", "daemonsets"), ("apps", "statefulsets"), ("batch", "cronjobs"),
    ("networking.k8s.io", "ingresses"),
})  # fmt: skip


ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


def _dig(obj: Any, *keys: str) -> Obj:
    """The map at `keys` inside `obj`, {} where a step is missing or not a map."""
    for key in keys:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, dict) else {}


def _same(item: Obj) -> Obj:
    return item


def _results(claim: Obj) -> builtins.list[Any]:
    results = _dig(claim, "status", "allocation", "devices").get("results")
    return results if isinstance(results, list) else []


def _first_admin(items: Any, path: str, holder: Callable[[Obj], Any]) -> str | None:
    """`<path>[i].adminAccess` of the first item whose holder asks for admin access, else None."""
    for index, item in enumerate(items if isinstance(items, list) else []):
        where = holder(item) if isinstance(item, dict) else None
        if isinstance(where, dict) and where.get("adminAccess") is True:
            return f"{path}[{index}].adminAccess"
    return None


#: Status fields without `omitempty`: a status that lacks them reads their zero value (clients require them).
_STATUS_ZEROES: dict[tuple[str, str], Obj] = {
    ("apps", "replicasets"): {"replicas": 0},
    ("", "replicationcontrollers"): {"replicas": 0},
    ("apps", "daemonsets"): {
        "currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0,
    },
    ("apps", "statefulsets"): {"replicas": 0, "availableReplicas": 0},
    # a struct, not a pointer: omitempty does not leave it out
    ("networking.k8s.io", "ingresses"): {"loadBalancer": {}},
}  # fmt: skip


def _struct_status(resource: ResourceDef, obj: Obj) -> None:
    if (resource.group, resource.plural) in _STRUCT_STATUS and obj.get("status") is None:
        obj["status"] = {}
    zeroes = _STATUS_ZEROES.get((resource.group, resource.plural))
    if zeroes and isinstance(obj.get("status"), dict):
        for field, zero in zeroes.items():
            obj["status"].setdefault(field, zero)


def _deletion_finalizers(
    resource: ResourceDef, finalizers: builtins.list[str], policy: str | None
) -> builtins.list[str]:
    """`finalizers` with the garbage collector's as a DELETE's propagationPolicy asks (upstream's
    deletionFinalizersForGarbageCollection): Orphan adds `orphan`, Foreground `foregroundDeletion`,
    Background neither; without a policy a finalizer already there decides, else the kind's default."""
    if (resource.group, resource.plural) in _WITHOUT_GARBAGE_COLLECTION:
        return finalizers
    if policy is None:
        if ORPHAN_FINALIZER in finalizers or FOREGROUND_FINALIZER in finalizers:
            return finalizers
        policy = "Orphan" if (resource.group, resource.plural) in _ORPHANS_BY_DEFAULT else "Background"
    wanted = [f for f in finalizers if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    if policy == "Orphan":
        wanted.append(ORPHAN_FINALIZER)
    elif policy == "Foreground":
        wanted.append(FOREGROUND_FINALIZER)
    return finalizers if set(wanted) == set(finalizers) else wanted


def _marked_terminating(namespace: Obj, now: str, policy: str | None) -> Obj:
    """A namespace after its first DELETE (the namespace registry's update; no content goes yet): a copy with
    `deletionTimestamp`, phase Terminating, and the garbage collector's finalizers as the propagation policy
    says (Orphan `orphan`, Foreground `foregroundDeletion`, Background neither; none: as they were)."""
    marked: Obj = clone(namespace)
    meta = marked["metadata"]
    meta["deletionTimestamp"] = now
    status = marked.get("status")
    if not isinstance(status, dict):
        status = marked["status"] = {}
    status["phase"] = TERMINATING
    finalizers = builtins.list(meta.get("finalizers") or [])
    if policy is not None:
        wanted = [f for f in finalizers if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
        if policy in ("Orphan", "Foreground"):
            wanted.append(ORPHAN_FINALIZER if policy == "Orphan" else FOREGROUND_FINALIZER)
        if set(wanted) != set(finalizers):
            meta["finalizers"] = wanted
            if not wanted:
                del meta["finalizers"]
    return marked


def _keep_namespace_finalizers(new: Obj, old: Obj) -> None:
    """A namespace update keeps the stored spec.finalizers (the namespace strategy's PrepareForUpdate)."""
    spec = new.get("spec")
    if not isinstance(spec, dict):
        spec = new["spec"] = {}
    finalizers = spec_finalizers(old)
    if finalizers:
        spec["finalizers"] = finalizers
    else:
        spec.pop("finalizers", None)


def _generated_name(prefix: str) -> str:
    """generateName's prefix and 5 random characters of the alphabet kube's utilrand.String draws from."""
    return prefix + "".join(_RANDOM.choices(_NAME_ALPHABET, k=5))


def _reorder(obj: Obj) -> Obj:
    """Key order as a Go server writes it: kind, apiVersion, metadata (struct order), the rest."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        ordered = {k: meta[k] for k in _METADATA_ORDER if k in meta}
        ordered.update({k: v for k, v in meta.items() if k not in ordered})
        meta = ordered
    out: Obj = {}
    for key in ("kind", "apiVersion"):
        if key in obj:
            out[key] = obj[key]
    if meta is not None:
        out["metadata"] = meta
    out.update({k: v for k, v in obj.items() if k not in out})
    return out


def _spec_part(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _qos_class(pod: Obj) -> str:
    spec = pod.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    for container in containers if isinstance(containers, list) else []:
        resources = container.get("resources") if isinstance(container, dict) else None
        for section in ("requests", "limits"):
            amounts = resources.get(section) if isinstance(resources, dict) else None
            if isinstance(amounts, dict) and any(k in ("cpu", "memory") for k in amounts):
                return "Burstable"
    return "BestEffort"


class Store:
    """Thread-safe in-memory object store with kube-apiserver write semantics."""

    def __init__(
        self,
        *,
        history_size: int = 10_000,
        clock: Callable[[], datetime] | None = None,
        graceful_pod_deletion: bool = False,
    ) -> None:
        self._lock = StoreLock()
        self._rv = 0
        # Each kind's objects in key order (a sorted dict, as the watch cache's btree): a page of a list
        # starts where its continue token left off and costs the page, not the whole kind.
        self._objects: dict[str, SortedDict[Key, Entry]] = {}
        self._revisions: dict[str, int] = {}  # plural → resourceVersion of its latest change
        self._history: deque[WatchEvent] = deque()
        self._history_size = history_size
        self._compacted_rv = 0
        self._watchers: builtins.list[_Watcher] = []
        self._subscribers: builtins.list[Subscriber] = []
        self._clock = clock or (lambda: datetime.now(UTC))
        #: Admission checks run on every valid create, update (patches, status and binding included) and
        #: delete, before the write (see `Admission`); raising ApiError refuses the write.
        self.admission: builtins.list[Admission] = []
        #: When True, deleting a running pod on a node only sets deletionTimestamp and a kubelet-like
        #: controller finishes the deletion (delete again with grace_period_seconds=0).
        self.graceful_pod_deletion = graceful_pod_deletion
        #: The DRA feature gates on (`dra.allocator.features` names): validation refuses new CEL
        #: selectors that use what a gate that is off leaves out, as kube-apiserver does.
        self.features: frozenset[str] = DEFAULT_FEATURES
        #: the cluster CA, which the root-ca-cert-publisher puts in every namespace once the server has one
        self.root_ca_pem: str | None = None
        for name in SYSTEM_NAMESPACES:
            self.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self.create(
            "services", clone(_KUBERNETES_SERVICE)
        )  # every cluster has it; kubectl cluster-info reads services
        for plural in _APISERVER_ENDPOINTS:
            self._publish_apiserver_endpoints(plural)

    # ------------------------------------------------------------------ basics

    @property
    def resource_version(self) -> int:
        with self._lock:
            return self._rv

    @property
    def lock(self) -> StoreLock:
        return self._lock

    @property
    def compacted_rv(self) -> int:
        with self._lock:
            return self._compacted_rv

    def now(self) -> str:
        return format_time(self._clock())

    def clock_now(self) -> datetime:
        """The cluster's current time (a test's fake clock when one was given)."""
        return self._clock()

    def _resource(self, plural: str) -> ResourceDef:
        resource = resource_for(plural)
        if resource is None:
            raise resource_not_found()
        return resource

    def _key(self, resource: ResourceDef, name: str, namespace: str | None) -> Key:
        if resource.namespaced:
            return (namespace or "default", name)
        return ("", name)

    def _table(self, plural: str) -> SortedDict[Key, Entry]:
        table = self._objects.get(plural)
        if table is None:
            table = self._objects[plural] = SortedDict()
        return table

    # ------------------------------------------------------------------ reads

    def get_entry(self, plural: str, name: str, *, namespace: str | None = None) -> Entry:
        resource = self._resource(plural)
        with self._lock:
            entry: Entry | None = self._table(plural).get(self._key(resource, name, namespace))
        if entry is None:
            raise not_found(resource, name)
        return entry

    def get(self, plural: str, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        obj: Obj = decode(self.get_entry(plural, name, namespace=namespace).raw)
        return obj

    def count(self, plural: str) -> int:
        """How many objects of this kind are stored, in every namespace."""
        with self._lock:
            return len(self._table(plural))

    def list(self, plural: str, *, namespace: str | None = None) -> builtins.list[dict[str, Any]]:
        _, entries = self.snapshot(plural, namespace=namespace)
        return [decode(e.raw) for e in entries]

    def snapshot(
        self, plural: str, *, namespace: str | None = None, at_rv: int | None = None
    ) -> tuple[int, builtins.list[Entry]]:
        """Entries in key order as of `at_rv` (default: now), rebuilt from history if older."""
        page = self.page(plural, namespace=namespace, at_rv=at_rv)
        return page.rv, page.entries

    def page(
        self,
        plural: str,
        *,
        namespace: str | None = None,
        at_rv: int | None = None,
        after: Key | None = None,
        limit: int = 0,
        matcher: Callable[[Obj], bool] | None = None,
    ) -> Page:
        """Up to `limit` entries (0: all) in key order after the key `after`, that `matcher` accepts, as of
        `at_rv` (default: now; older states are rebuilt from the retained history, 410 past it).

        Costs the entries read plus the history since `at_rv`, not the kind's size: the table is kept in
        key order and the page starts at `after` (kube-apiserver serves pages from its watch cache's btree
        the same way)."""
        if not self._resource(plural).namespaced:
            namespace = None  # cluster-scoped kinds ignore a namespace, as kube does
        with self._lock:
            table = self._table(plural)
            rv = self._rv
            rewound: dict[Key, Entry | None] = {}
            if at_rv is not None and at_rv < self._rv:
                if at_rv < self._compacted_rv:
                    raise expired(f"too old resource version: {at_rv} ({self._compacted_rv + 1})")
                rv = at_rv
                for event in reversed(self._history):
                    if event.rv <= at_rv:
                        break
                    if event.plural == plural:  # the oldest change after at_rv wins: what was there then
                        rewound[event.key] = None if event.type == "ADDED" or event.old is None else event.old
            if not (rewound or limit or matcher) and namespace is None and after is None:
                return Page(rv, builtins.list(table.values()), False, None)  # the whole kind, as it is
            low, high = _key_range(namespace, after)
            ordered = _merged(table, rewound, low, high)
            entries: builtins.list[Entry] = []
            more = False
            for _key, entry in ordered:
                if matcher is not None and not matcher(entry.obj):
                    continue
                if limit and len(entries) == limit:
                    more = True
                    break
                entries.append(entry)
            remaining: int | None = None
            if more and matcher is None:
                remaining = _count(table, rewound, _key_range(namespace, entry_key(entries[-1]))[0], high)
        return Page(rv, entries, more, remaining)

    def revision(self, plural: str) -> int:
        """The resourceVersion of the latest change (create, update or delete) of `plural`, 0 if none yet.
        A controller that caches what it derived from a kind compares this instead of listing the kind."""
        with self._lock:
            return self._revisions.get(plural, 0)

    # ------------------------------------------------------------------ watch plumbing

    def subscribe(self, callback: Callable[[str, str, dict[str, Any]], None]) -> Callable[[], None]:
        """Call `callback(event_type, plural, obj)` after every committed change, from the writer's
        thread, in commit order. It must be quick (enqueue), and must not mutate `obj`: it is the
        committed object itself (a copy per subscriber per write was most of a burst's decoding)."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._subscribers.remove(callback)

        return unsubscribe

    def open_watch(
        self, plural: str, *, namespace: str | None, since_rv: int | None, deliver: Deliver
    ) -> tuple[int, builtins.list[Entry], builtins.list[WatchEvent], Callable[[], None]]:
        """Register `deliver` for future events and return what precedes them, atomically.

        since_rv None: (rv, current objects, [], unsubscribe) — the caller sends them as ADDED.
        since_rv set: (rv, [], retained events after since_rv, unsubscribe), or ApiError 410.
        """
        self._resource(plural)
        watcher = _Watcher(plural, namespace, deliver)
        with self._lock:
            if since_rv is None:
                rv, entries = self.snapshot(plural, namespace=namespace)
                backlog: builtins.list[WatchEvent] = []
            else:
                if since_rv < self._compacted_rv:
                    raise expired(f"too old resource version: {since_rv} ({self._compacted_rv + 1})")
                rv, entries = self._rv, []
                backlog = [
                    e
                    for e in self._history
                    if e.rv > since_rv and e.plural == plural and (namespace is None or e.key[0] == namespace)
                ]
            self._watchers.append(watcher)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._watchers.remove(watcher)

        return rv, entries, backlog, unsubscribe

    def compact(self) -> int:
        """Forget all history: a watch or continue token from an older resourceVersion gets 410."""
        with self._lock:
            self._history.clear()
            self._compacted_rv = self._rv
            return self._rv

    def _commit(self, event_type: str, resource: ResourceDef, key: Key, obj: Obj, old: Entry | None) -> Entry:
        """Assign the next resourceVersion, store (or remove), record history, notify; the root CA's
        ConfigMap changed, let the root-ca-cert-publisher answer. Lock held."""
        self._rv += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        obj = _reorder(obj)
        entry = Entry(obj, dumps(obj), self._rv)
        table = self._table(resource.plural)
        self._revisions[resource.plural] = self._rv
        if event_type == "DELETED":
            table.pop(key, None)
        else:
            table[key] = entry
        event = WatchEvent(self._rv, event_type, resource.plural, key, entry, old)
        self._history.append(event)
        while len(self._history) > self._history_size:
            self._compacted_rv = self._history.popleft().rv
        for watcher in self._watchers:
            if watcher.plural == resource.plural and (
                watcher.namespace is None or watcher.namespace == key[0]
            ):
                try:
                    watcher.deliver(event)
                except Exception:  # a broken watcher must not break writes
                    log.exception("watch delivery failed")
        for subscriber in list(self._subscribers):
            try:
                subscriber(event_type, resource.plural, entry.obj)
            except Exception:
                log.exception("store subscriber failed")
        if resource.plural == "configmaps" and key[1] == ROOT_CA_CONFIG_MAP:
            self._keep_root_ca(event)
        elif resource.plural == "serviceaccounts" and key[1] == "default" and event.type == "DELETED":
            self._create_default_account(key[0])  # the serviceaccounts controller puts it back
        elif resource.plural in _APISERVER_ENDPOINTS and key == ("default", "kubernetes"):
            self._keep_apiserver_endpoints(resource.plural, event)
        return entry

    # ------------------------------------------------------------------ validation hooks

    def _validate(
        self,
        resource: ResourceDef,
        obj: Obj,
        old: Obj | None,
        subresource: str | None,
        field_validation: str | None = None,
    ) -> builtins.list[str]:
        """Warnings for a valid object, else ApiError 422 (400 for unknown fields under Strict).

        `field_validation` is the request's fieldValidation: Strict refuses unknown fields as a
        decoding error, Warn drops them with a warning, Ignore drops them; None (in-process writers)
        treats them as invalid, so a controller bug fails loudly.
        """
        causes, warnings = validation.validate(
            resource, obj, old, subresource=subresource, features=self.features, old_is_stored=True
        )
        causes = self._admin_access_causes(resource, obj, old, subresource) + list(causes)
        warnings = list(warnings)
        unknown = [c for c in causes if str(c.get("message", "")).startswith('unknown field "')]
        if unknown and field_validation is not None:
            if field_validation == "Strict":
                raise bad_request(
                    f'{resource.kind} in version "{resource.version}" cannot be handled as a {resource.kind}: '
                    "strict decoding error: " + ", ".join(str(c["message"]) for c in unknown)
                )
            for cause in unknown:
                drop_field(obj, str(cause.get("field", "")))
            if field_validation == "Warn":
                warnings = [str(c["message"]) for c in unknown] + warnings
            causes = [c for c in causes if c not in unknown]
        if causes:
            raise invalid(resource, str((obj.get("metadata") or {}).get("name", "")), list(causes))
        for check in self.admission:
            check("CREATE" if old is None else "UPDATE", resource, obj, old, subresource)
        return warnings

    def _admin_access_causes(
        self, resource: ResourceDef, obj: Obj, old: Obj | None, subresource: str | None
    ) -> builtins.list[dict[str, str]]:
        """The registry's namespace check of DRA admin access, worded and placed as upstream's.

        A new claim or template whose request asks for `adminAccess` (the first such request is named,
        as `spec.devices.requests[i]` even in a template), or a claim status granting it anew, needs its
        namespace labelled `resource.kubernetes.io/admin-access: "true"`.
        """
        if resource.group != "resource.k8s.io" or resource.plural not in (
            "resourceclaims",
            "resourceclaimtemplates",
        ):
            return []
        path = None
        if subresource is None and old is None:
            spec = (
                _dig(obj, "spec", "spec")
                if resource.plural == "resourceclaimtemplates"
                else _dig(obj, "spec")
            )
            requests = _dig(spec, "devices").get("requests")
            path = _first_admin(requests, "spec.devices.requests", lambda r: r.get("exactly"))
        elif subresource == "status" and old is not None and _first_admin(_results(old), "", _same) is None:
            # granted before: the allocation is immutable, no need to look again
            path = _first_admin(_results(obj), "status.allocation.devices.results", _same)
        if path is None:
            return []
        namespace = self._table("namespaces").get(("", str((obj.get("metadata") or {}).get("namespace", ""))))
        labels = (namespace.obj["metadata"].get("labels") or {}) if namespace is not None else {}
        if labels.get(ADMIN_ACCESS_LABEL) == "true":
            return []
        message = f"Forbidden: admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing namespace"
        return [{"reason": "FieldValueForbidden", "message": message, "field": path}]

    # ------------------------------------------------------------------ create

    def create(
        self, plural: str, obj: dict[str, Any], *, namespace: str | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        return self.create_with_warnings(plural, obj, namespace=namespace, dry_run=dry_run)[0]

    def create_with_warnings(
        self,
        plural: str,
        obj: Obj,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> tuple[Obj, builtins.list[str]]:
        resource = self._resource(plural)
        if not isinstance(obj, dict):
            raise bad_request("the body of the request was in an unknown format")
        field_manager = _acting_manager(field_manager)
        new: Obj = clone(obj)
        new["apiVersion"] = resource.api_version
        new["kind"] = resource.kind
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            meta = new["metadata"] = {}
        if resource.namespaced:
            body_ns = meta.get("namespace")
            if namespace and body_ns and body_ns != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace or body_ns or "default"
        else:
            meta.pop("namespace", None)
        # admission errors name the request's object as it came: a generated name does not exist yet there
        requested_name = str(meta.get("name") or meta.get("generateName") or "")
        if resource.namespaced:
            self._admit_into_namespace(resource, str(meta["namespace"]), requested_name)
        generated = not meta.get("name") and bool(meta.get("generateName"))
        if generated:
            meta["name"] = _generated_name(str(meta["generateName"]))
        elif not meta.get("name"):
            raise invalid(
                resource,
                "",
                [
                    {
                        "reason": "FieldValueRequired",
                        "message": "Required value: name or generateName is required",
                        "field": "metadata.name",
                    }
                ],
            )
        name = str(meta["name"])
        for transient in (
            "resourceVersion",
            "uid",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ):
            meta.pop(transient, None)
        now = self.now()
        # before defaulting: a Job's generated selector names its uid
        meta["uid"] = str(uuid.UUID(int=_RANDOM.getrandbits(128), version=4))
        # what the field manager records: the object as decoded, with the scheme's defaults, before admission
        # and the strategy's PrepareForCreate add theirs
        decoded = _decoded_for_create(resource, new, now) if field_manager else None
        self._prepare_create(resource, new)
        _struct_status(resource, new)
        canonical_quantities(resource.group, resource.version, resource.kind, new)
        defaulting.normalize_times(new)
        defaulting.apply_defaults(plural, new, None, now)
        if plural == "pods":
            self._check_service_account(resource, new, requested_name)
        warnings = self._validate(resource, new, None, None, field_validation)
        # Validation saw what the request decoded to; what is stored and returned went through encoding.
        drop_empty_collections(resource.group, resource.version, resource.kind, new)
        if field_manager:
            new = _record_manager(resource, None, new, field_manager, None, decoded)
            meta = new["metadata"]
        with self._lock:
            key = self._key(resource, name, meta.get("namespace"))
            if resource.namespaced and ("", key[0]) not in self._table("namespaces"):
                raise namespace_not_found(key[0])
            # RetryGenerateName (GA since v1.32): a generated name that is taken is drawn again, up to
            # 8 attempts in all, before the create fails with AlreadyExists
            attempts = 1
            while key in self._table(plural) and generated and attempts < _GENERATE_NAME_ATTEMPTS:
                attempts += 1
                name = meta["name"] = _generated_name(str(meta["generateName"]))
                key = self._key(resource, name, meta.get("namespace"))
            if key in self._table(plural):
                raise already_exists(resource, name)
            meta["creationTimestamp"] = now
            if (resource.group, plural) not in _WITHOUT_GENERATION:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            if dry_run:
                return _reorder(new), warnings
            entry = self._commit("ADDED", resource, key, new, None)
            if plural == "namespaces":
                self._create_default_service_account(name)
        return decode(entry.raw), warnings

    def _admit_into_namespace(self, resource: ResourceDef, namespace: str, name: str) -> None:
        """kube-apiserver's NamespaceLifecycle admission plugin, the first to see a create (before defaulting
        and validation): 404 in a namespace that does not exist, 403 in one being terminated."""
        with self._lock:
            entry = self._table("namespaces").get(("", namespace))
        if entry is None:
            raise namespace_not_found(namespace)
        if is_terminating(entry.obj):
            raise namespace_terminating(resource, name or "Unknown", namespace)

    def _check_service_account(self, resource: ResourceDef, pod: Obj, name: str) -> None:
        """kube-apiserver's ServiceAccount admission plugin (mutating, so before validation): a new pod's
        account must exist in its namespace. A pod in a namespace that does not exist is left to the
        namespace's 404 (NamespaceLifecycle comes first); a kubelet's mirror pod names no account."""
        namespace = str(pod["metadata"].get("namespace", ""))
        spec = pod.get("spec")
        account = spec.get("serviceAccountName") if isinstance(spec, dict) else None
        if not account or not isinstance(account, str):
            return  # a malformed spec is validation's to refuse
        with self._lock:
            if ("", namespace) not in self._table("namespaces"):
                return
            if (namespace, account) in self._table("serviceaccounts"):
                return
        raise ApiError(
            403, "Forbidden",
            f'{resource.group_resource} "{name}" is forbidden: error looking up service account '
            f'{namespace}/{account}: serviceaccount "{account}" not found',
            {"name": name, "kind": resource.plural},
        )  # fmt: skip

    def _create_default_service_account(self, namespace: str) -> None:
        """Every namespace gets ServiceAccount `default` (the serviceaccounts controller, at once) and, with a
        CA, ConfigMap `kube-root-ca.crt` (the root-ca-cert-publisher). Lock held."""
        self._create_default_account(namespace)
        self._publish_root_ca(namespace)

    def _create_default_account(self, namespace: str) -> None:
        """ServiceAccount `default`, when the namespace has none: at its creation, and again when it is deleted
        (upstream's serviceaccounts controller). Refused in a namespace being terminated or gone: left out,
        as upstream. Lock held."""
        account = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": namespace},
        }
        with contextlib.suppress(ApiError):
            self.create("serviceaccounts", account)

    def _publish_apiserver_endpoints(self, plural: str) -> None:
        with contextlib.suppress(ApiError):  # refused (default being terminated): the next change tries again
            self.create(plural, clone(_APISERVER_ENDPOINTS[plural][0]))

    def _keep_apiserver_endpoints(self, plural: str, event: WatchEvent) -> None:
        """kube-apiserver's endpoint reconciler, at once: the `kubernetes` Endpoints and EndpointSlice in
        `default`, deleted, come back; edited addresses or ports are put back (other edits stay). Lock held."""
        if event.type == "DELETED":
            self._publish_apiserver_endpoints(plural)
        elif event.type == "MODIFIED":
            wanted, owned = _APISERVER_ENDPOINTS[plural]
            current = event.entry.obj
            if any(current.get(f) != wanted[f] for f in owned):
                repaired = clone(current)
                repaired.update({f: clone(wanted[f]) for f in owned})
                with contextlib.suppress(ApiError):  # changed again meanwhile: that change comes here too
                    self.update(plural, repaired)

    def publish_root_ca(self, pem: str) -> None:
        """Give every namespace, now and later, the `kube-root-ca.crt` ConfigMap holding this CA."""
        with self._lock:
            self.root_ca_pem = pem
            for _, namespace in list(self._table("namespaces")):
                self._publish_root_ca(namespace)

    def _publish_root_ca(self, namespace: str) -> None:
        if self.root_ca_pem is None:
            return
        with contextlib.suppress(ApiError):  # refused in a namespace being terminated: left out, as upstream
            self.create("configmaps", root_ca_config_map(namespace, self.root_ca_pem))

    def _keep_root_ca(self, event: WatchEvent) -> None:
        """The root-ca-cert-publisher, at once: `kube-root-ca.crt` deleted (by a DELETE, a collection's, an
        update that dropped its last finalizer) is created again, and edited data is put back. Lock held."""
        if self.root_ca_pem is None:
            return
        if event.type == "DELETED":
            self._publish_root_ca(event.key[0])
        elif event.type == "MODIFIED":
            repaired = root_ca_repaired(event.entry.obj, self.root_ca_pem)
            if repaired is not None:
                with contextlib.suppress(ApiError):  # changed again meanwhile: that change comes here too
                    self.update("configmaps", repaired)

    def _prepare_create(self, resource: ResourceDef, obj: Obj) -> None:
        plural = resource.plural
        if plural in _STATUS_CLEARED_ON_CREATE:
            obj.pop("status", None)
        elif plural == "pods":
            obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj)}
        elif plural == "namespaces":
            name = obj["metadata"]["name"]
            labels = obj["metadata"].setdefault("labels", {})
            labels["kubernetes.io/metadata.name"] = name
            # the strategy's PrepareForCreate: the namespace controller's finalizer after any asked for
            spec = obj.get("spec")
            if not isinstance(spec, dict):
                spec = obj["spec"] = {}
            finalizers = spec.get("finalizers")
            finalizers = builtins.list(finalizers) if isinstance(finalizers, list) else []
            if KUBERNETES_FINALIZER not in finalizers:
                finalizers.append(KUBERNETES_FINALIZER)
            spec["finalizers"] = finalizers
            obj["status"] = {"phase": "Active"}

    # ------------------------------------------------------------------ update

    def update(
        self, plural: str, obj: dict[str, Any], *, subresource: str | None = None, dry_run: bool = False
    ) -> dict[str, Any]:
        return self.update_with_warnings(plural, obj, subresource=subresource, dry_run=dry_run)[0]

    def update_with_warnings(
        self,
        plural: str,
        obj: Obj,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        namespace: str | None = None,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> tuple[Obj, builtins.list[str]]:
        resource = self._resource(plural)
        if subresource is not None and subresource not in resource.subresources:
            raise resource_not_found()
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
            raise bad_request("the body of the request was in an unknown format")
        field_manager = _acting_manager(field_manager)
        meta = obj["metadata"]
        name = str(meta.get("name") or "")
        if not name:
            raise bad_request("name is required")
        ns = namespace or meta.get("namespace") if resource.namespaced else None
        with self._lock:
            key = self._key(resource, name, ns)
            current = self._table(plural).get(key)
            if current is None:
                if subresource is None and (resource.group, plural) in CREATE_ON_UPDATE:
                    return self.create_with_warnings(plural, obj, namespace=ns, dry_run=dry_run,
                                                     field_manager=field_manager, field_validation=field_validation)  # fmt: skip
                raise not_found(resource, name)
            if (resource.group, plural) in _CONDITIONAL_UPDATES_ONLY and meta.get("resourceVersion") in (
                None,
                "",
            ):
                raise resource_version_required(resource, name)
            return self._update_locked(
                resource,
                key,
                current,
                obj,
                subresource=subresource,
                dry_run=dry_run,
                field_manager=field_manager,
                field_validation=field_validation,
            )

    def _update_locked(
        self,
        resource: ResourceDef,
        key: Key,
        current: Entry,
        incoming: Obj,
        *,
        subresource: str | None,
        dry_run: bool,
        owned: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> tuple[Obj, builtins.list[str]]:
        """`owned`: `incoming` is a fresh object nobody else holds, so it need not be copied."""
        name = key[1]
        old = current.obj
        decoded: Obj | None = None
        in_meta = incoming.get("metadata") or {}
        wanted_rv = in_meta.get("resourceVersion")
        if wanted_rv not in (None, "") and str(wanted_rv) != old["metadata"]["resourceVersion"]:
            raise conflict(resource, name)
        wanted_uid = in_meta.get("uid")
        if wanted_uid and wanted_uid != old["metadata"].get("uid"):
            raise conflict(
                resource,
                name,
                f"Precondition failed: UID in precondition: {wanted_uid}, UID in object meta: {old['metadata'].get('uid')}",
            )
        if subresource == "status":
            new: Obj = clone(old)
            if "status" in incoming:
                new["status"] = incoming["status"] if owned else clone(incoming["status"])
                defaulting.normalize_times(new["status"], old.get("status"))
            else:
                new.pop("status", None)
            if "managedFields" in in_meta:
                new["metadata"]["managedFields"] = clone(in_meta["managedFields"])
            if resource.plural == "resourceclaims":
                _drop_deallocated_status_devices(new, old)
        else:
            new = incoming if owned else clone(incoming)
            new["apiVersion"] = resource.api_version
            new["kind"] = resource.kind
            meta = new["metadata"]
            for fixed in ("name", "namespace", "uid", "creationTimestamp", "generation", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "selfLink"):  # fmt: skip
                if fixed in old["metadata"]:
                    meta[fixed] = old["metadata"][fixed]
                else:
                    meta.pop(fixed, None)
            if "managedFields" not in meta and "managedFields" in old["metadata"]:
                meta["managedFields"] = old["metadata"]["managedFields"]
            if resource.status:
                if "status" in old:
                    new["status"] = clone(old["status"])
                else:
                    new.pop("status", None)
            if resource.plural == "namespaces" and subresource is None:
                _keep_namespace_finalizers(new, old)  # only the finalize subresource changes them
            defaulting.normalize_times(new, old)
            if field_manager:  # what the field manager records: before the strategy's PrepareForUpdate
                decoded = clone(new)
                defaulting.apply_defaults(resource.plural, decoded, old, self.now(), admission=False)
                canonical_quantities(resource.group, resource.version, resource.kind, decoded, old)
                drop_empty_collections(resource.group, resource.version, resource.kind, decoded, old)
            defaulting.apply_defaults(resource.plural, new, old, self.now())
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        _struct_status(resource, new)
        # What equals the stored object (decoded, encoded and checked when it was written) is left as is.
        canonical_quantities(resource.group, resource.version, resource.kind, new, old)
        warnings = self._validate(resource, new, old, subresource, field_validation)
        drop_empty_collections(resource.group, resource.version, resource.kind, new, old)
        if subresource is None:
            # After validation, which may have dropped unknown fields (fieldValidation Warn/Ignore).
            if resource.plural in _IMMUTABLE_SPEC and new.get("spec") != old.get("spec"):
                raise invalid(resource, name, [_IMMUTABLE_SPEC_CAUSE])
            if "generation" in new["metadata"] and _spec_part(new) != _spec_part(old):
                new["metadata"]["generation"] = int(old["metadata"].get("generation", 1)) + 1
        if _reorder(new) == old:
            return decode(current.raw), warnings  # no-op: no new resourceVersion, no event
        if field_manager:
            new = _record_manager(resource, old, new, field_manager, subresource, decoded)
        if dry_run:
            return _reorder(new), warnings
        if (
            new["metadata"].get("deletionTimestamp")
            and not new["metadata"].get("finalizers")
            and not old["metadata"].get("deletionGracePeriodSeconds")
            and not (resource.plural == "namespaces" and spec_finalizers(new))
        ):
            # The last finalizer gone, and no grace period still running (upstream's ShouldDeleteDuringUpdate,
            # for a namespace its spec.finalizers too): the update is not written, the stored object is deleted
            # (deleteWithoutFinalizers). Watchers get the last stored state at the deletion's resourceVersion;
            # the writer gets its own object back, at the resourceVersion it had.
            self._commit("DELETED", resource, key, clone(old), current)
            return decode(dumps(_reorder(new))), warnings
        entry = self._commit("MODIFIED", resource, key, new, current)
        return decode(entry.raw), warnings

    # ------------------------------------------------------------------ patch

    def patch(
        self,
        plural: str,
        name: str,
        patch: object,
        *,
        content_type: str = "application/merge-patch+json",
        namespace: str | None = None,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        return self.patch_with_warnings(
            plural,
            name,
            patch,
            content_type=content_type,
            namespace=namespace,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
        )[0]

    def patch_with_warnings(
        self,
        plural: str,
        name: str,
        patch: object,
        *,
        content_type: str = "application/merge-patch+json",
        namespace: str | None = None,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: str | None = None,
    ) -> tuple[Obj, builtins.list[str]]:
        resource = self._resource(plural)
        if subresource is not None and subresource not in resource.subresources:
            raise resource_not_found()
        body = patch if isinstance(patch, bytes) else dumps(patch)
        ctype = content_type.split(";")[0].strip().lower()
        is_apply = ctype == "application/apply-patch+yaml" or ctype == "application/apply-patch+cbor"
        if not is_apply:
            field_manager = _acting_manager(field_manager)
        if is_apply and not field_manager:
            raise bad_request("PATCH requests with apply content type must specify a fieldManager")
        with self._lock:
            key = self._key(resource, name, namespace)
            current = self._table(plural).get(key)
            if current is None:
                if not is_apply or subresource is not None:
                    raise not_found(resource, name)
                skeleton: Obj = {
                    "apiVersion": resource.api_version,
                    "kind": resource.kind,
                    "metadata": {"name": name},
                }
                if resource.namespaced:
                    skeleton["metadata"]["namespace"] = key[0]
                created = _apply(resource, skeleton, body, ctype, field_manager, force, None)
                created.setdefault("metadata", {})
                if created["metadata"].get("name", name) != name:
                    raise bad_request(
                        f"the name of the object ({created['metadata'].get('name')}) does not match the name on the URL ({name})"
                    )
                created["metadata"]["name"] = name
                return self.create_with_warnings(
                    plural,
                    created,
                    namespace=key[0] or None,
                    dry_run=dry_run,
                    field_validation=field_validation,
                )
            patched = _apply(  # on a fresh decode of the stored object: the patch may take it over
                resource, decode(current.raw), body, ctype, field_manager, force, subresource, private=True
            )
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise bad_request("the patch produced an object without metadata")
            if patched["metadata"].get("name", name) != name:
                raise bad_request(
                    f"the name of the object ({patched['metadata'].get('name')}) does not match the name on the URL ({name})"
                )
            patched["metadata"]["name"] = name
            return self._update_locked(
                resource,
                key,
                current,
                patched,
                subresource=subresource,
                dry_run=dry_run,
                owned=True,
                # apply records its own managedFields; other patch types record an Update entry
                field_manager=None if is_apply else field_manager,
                field_validation=field_validation,
            )

    # ------------------------------------------------------------------ binding

    def bind_pod(self, name: str, *, namespace: str, node: str, uid: str | None = None) -> Obj:
        """Set a pending pod's `spec.nodeName`, as the pods/binding subresource does (a plain update of a
        pod's spec may not change it). 409 if the pod was replaced (uid) or is already bound."""
        resource = self._resource("pods")
        with self._lock:
            key = self._key(resource, name, namespace)
            current = self._table("pods").get(key)
            if current is None:
                raise not_found(resource, name)
            meta = current.obj["metadata"]
            if (uid and meta.get("uid") != uid) or (current.obj.get("spec") or {}).get("nodeName"):
                raise conflict(resource, name, "the pod changed or is already bound")
            bound = clone(current.obj)
            bound["spec"]["nodeName"] = node
            obj, _ = self._update_locked(
                resource, key, current, bound, subresource="binding", dry_run=False, owned=True
            )
            return obj

    # ------------------------------------------------------------------ delete

    def delete(
        self,
        plural: str,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> dict[str, Any]:
        """Delete, or mark deleted while finalizers or a grace period hold the object (it is returned).

        `propagation_policy` (Orphan, Background, Foreground; None: the kind's default) leaves the
        garbage collector's finalizer, `orphan` or `foregroundDeletion`, as upstream's registry does: the
        object stays, marked, until the collector has orphaned or deleted its dependents."""
        return self.deletion(
            plural,
            name,
            namespace=namespace,
            uid=uid,
            resource_version=resource_version,
            dry_run=dry_run,
            grace_period_seconds=grace_period_seconds,
            propagation_policy=propagation_policy,
        ).obj

    def deletion(
        self,
        plural: str,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = None,
    ) -> Deletion:
        """`delete`, saying also whether the object went (or, dry run, would go) at once: the API answers
        such a DELETE as the kind's registry says (the object, or a Status naming it)."""
        resource = self._resource(plural)
        with self._lock:
            key = self._key(resource, name, namespace)
            current = self._table(plural).get(key)
            if current is None:
                raise not_found(resource, name)
            meta = current.obj["metadata"]
            if uid and uid != meta.get("uid"):
                raise conflict(
                    resource,
                    name,
                    f"Precondition failed: UID in precondition: {uid}, UID in object meta: {meta.get('uid')}",
                )
            if resource_version and resource_version != meta.get("resourceVersion"):
                raise conflict(
                    resource,
                    name,
                    "Precondition failed: ResourceVersion in precondition: "
                    f"{resource_version}, ResourceVersion in object meta: {meta.get('resourceVersion')}",
                )
            for check in self.admission:
                check("DELETE", resource, None, current.obj, None)
            if plural == "namespaces":
                if name in SYSTEM_NAMESPACES:
                    raise ApiError(
                        403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may not be deleted',
                        {"name": name, "kind": "namespaces"},
                    )  # fmt: skip
                if not meta.get("deletionTimestamp"):
                    # The namespace registry's first DELETE only marks it; the namespace controller empties it.
                    terminating = _marked_terminating(current.obj, self.now(), propagation_policy)
                    if dry_run:
                        return Deletion(_reorder(terminating), removed=False)
                    entry = self._commit("MODIFIED", resource, key, terminating, current)
                    return Deletion(decode(entry.raw), removed=False)
                if spec_finalizers(current.obj):
                    return Deletion(decode(current.raw), removed=False)  # still being emptied: as it is
            marked = self._marked_for_deletion(
                resource, current.obj, grace_period_seconds, propagation_policy
            )
            if marked is current.obj:  # a graceful deletion already pending: nothing a DELETE says changes it
                return Deletion(decode(current.raw), removed=False)
            if marked is not None:
                if dry_run:
                    return Deletion(_reorder(marked), removed=False)
                if _reorder(marked) == current.obj:
                    return Deletion(
                        decode(current.raw), removed=False
                    )  # no-op: no new resourceVersion, no event
                return Deletion(
                    decode(self._commit("MODIFIED", resource, key, marked, current).raw), removed=False
                )
            if dry_run:
                return Deletion(decode(current.raw), removed=True)
            final = clone(current.obj)
            return Deletion(decode(self._commit("DELETED", resource, key, final, current).raw), removed=True)

    def _marked_for_deletion(
        self, resource: ResourceDef, obj: Obj, requested: int | None, policy: str | None
    ) -> Obj | None:
        """What a DELETE leaves of `obj` when it does not remove it (upstream's BeforeDelete and
        updateForGracefulDeletionAndFinalizers): a copy marked deleted (deletionTimestamp, grace period,
        the garbage collector's finalizers); `obj` itself while its graceful deletion is pending; None
        when the object goes now."""
        meta = obj["metadata"]
        period = int(meta.get("deletionGracePeriodSeconds") or 0)
        started = parse_time(meta.get("deletionTimestamp"))
        shorter = None if requested is None else (1 if requested < 0 else requested)
        if started is not None and period and (shorter is None or shorter >= period):
            return obj  # a graceful deletion is pending: only a shorter grace period may be asked for
        marked: Obj = clone(obj)
        new_meta = marked["metadata"]
        if started is None:
            graceful = self._graceful_seconds(resource, obj, requested)
            new_meta["deletionTimestamp"] = format_time(self._clock() + timedelta(seconds=graceful))
            new_meta["deletionGracePeriodSeconds"] = graceful
            if "generation" in new_meta:
                new_meta["generation"] = int(new_meta["generation"]) + 1
        elif period and shorter is not None:
            new_meta["deletionTimestamp"] = format_time(started - timedelta(seconds=period - shorter))
            graceful = new_meta["deletionGracePeriodSeconds"] = shorter
        else:
            graceful = 0  # held by finalizers once its grace period ended
        finalizers = builtins.list(meta.get("finalizers") or [])
        wanted = _deletion_finalizers(resource, finalizers, policy)
        if not wanted and not graceful:
            return None
        if wanted != finalizers:
            new_meta["finalizers"] = wanted
            if not wanted:
                new_meta.pop("finalizers")
        return marked

    def _graceful_seconds(self, resource: ResourceDef, obj: Obj, requested: int | None) -> int:
        """Seconds of graceful termination a pod gets, or 0 when it is removed at once."""
        if resource.plural != "pods" or not self.graceful_pod_deletion or requested == 0:
            return 0
        if not (obj.get("spec") or {}).get("nodeName"):
            return 0
        if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return max(requested, 1)
        return int((obj.get("spec") or {}).get("terminationGracePeriodSeconds", 30) or 1)

    def delete_collection(
        self,
        plural: str,
        *,
        namespace: str | None = None,
        match: Callable[[Obj], bool] | None = None,
        dry_run: bool = False,
        propagation_policy: str | None = None,
    ) -> tuple[int, builtins.list[Obj]]:
        """Delete every object the list matches; (the list's resourceVersion, its items as listed), what
        upstream's DeleteCollection answers (the list it deleted from, not each DELETE's answer)."""
        rv, entries = self.snapshot(plural, namespace=namespace)
        listed: builtins.list[Obj] = []
        for entry in entries:
            if match is not None and not match(entry.obj):
                continue
            listed.append(decode(entry.raw))
            meta = entry.obj["metadata"]
            try:
                self.delete(
                    plural,
                    meta["name"],
                    namespace=meta.get("namespace"),
                    dry_run=dry_run,
                    propagation_policy=propagation_policy,
                )
            except ApiError as error:
                if error.status != 404:
                    raise
        return rv, listed

    # ------------------------------------------------------------------ helpers for the server

    def iter_plurals(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._objects))


# ---------------------------------------------------------------------- paging in key order


def _allocated_devices(claim: Obj) -> set[tuple[Any, ...]]:
    status = claim.get("status")
    allocation = status.get("allocation") if isinstance(status, dict) else None
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    return {
        (r.get("driver"), r.get("pool"), r.get("device"), r.get("shareID"))
        for r in results or []
        if isinstance(r, dict)
    }


def _drop_deallocated_status_devices(new: Obj, old: Obj) -> None:
    """resourceclaimStatusStrategy.PrepareForUpdate's dropDeallocatedStatusDevices: the status.devices entries
    of devices the old allocation had and the new one has not go with them, before validation."""
    gone = _allocated_devices(old) - _allocated_devices(new)
    status = new.get("status")
    if not gone or not isinstance(status, dict) or not isinstance(status.get("devices"), list):
        return
    kept = [
        d
        for d in status["devices"]
        if not isinstance(d, dict)
        or (d.get("driver"), d.get("pool"), d.get("device"), d.get("shareID")) not in gone
    ]
    if kept:
        status["devices"] = kept
    else:
        del status["devices"]


def entry_key(entry: Entry) -> Key:
    """An entry's key in its table: (namespace or "", name)."""
    meta = entry.obj["metadata"]
    return (str(meta.get("namespace") or ""), str(meta["name"]))


def _key_range(namespace: str | None, after: Key | None) -> tuple[Key | tuple[str], Key | tuple[str] | None]:
    """(low, high): the keys of a page are > low and < high (None: no end). `(ns,)` sorts before every
    key of `ns` and `(ns + "\\0",)` after them (names and namespaces hold no NUL)."""
    low: Key | tuple[str] = ("",) if after is None else after
    high: tuple[str] | None = None
    if namespace is not None:
        low = max(low, (namespace,))
        high = (namespace + "\0",)
    return low, high


def _merged(
    table: SortedDict[Key, Entry], rewound: dict[Key, Entry | None], low: Any, high: Any
) -> Iterator[tuple[Key, Entry]]:
    """(key, entry) in key order within (low, high): the table as it is, with the keys changed since the
    page's resourceVersion replaced by what they were then (None: they did not exist)."""
    current = (
        (key, table[key]) for key in table.irange(low, high, inclusive=(False, False)) if key not in rewound
    )
    if not rewound:
        yield from current
        return
    older = sorted(
        (k, e) for k, e in rewound.items() if e is not None and low < k and (high is None or k < high)
    )
    yield from heapq.merge(current, older, key=lambda pair: pair[0])


def _count(table: SortedDict[Key, Entry], rewound: dict[Key, Entry | None], low: Any, high: Any) -> int:
    """How many keys lie within (low, high) as of the page's resourceVersion (see `_merged`)."""
    start: int = table.bisect_right(low)
    end: int = len(table) if high is None else table.bisect_left(high)
    count = max(0, end - start)
    for key, entry in rewound.items():
        if low < key and (high is None or key < high):
            count += (entry is not None) - (key in table)
    return count


# ---------------------------------------------------------------------- unknown fields


def _field_tokens(path: str) -> list[str]:
    """`spec.devices[0].attributes[a.b/c].x` -> ["spec", "devices", "0", "attributes", "a.b/c", "x"]."""
    tokens: list[str] = []
    i = 0
    while i < len(path):
        if path[i] == ".":
            i += 1
        elif path[i] == "[":
            end = path.index("]", i)
            tokens.append(path[i + 1 : end])
            i = end + 1
        else:
            end = i
            while end < len(path) and path[end] not in ".[":
                end += 1
            tokens.append(path[i:end])
            i = end
    return tokens


def drop_field(obj: Obj, path: str) -> None:
    """Remove the field at a kube-style field path, if it is there."""
    try:
        tokens = _field_tokens(path)
    except ValueError:
        return
    node: Any = obj
    for token in tokens[:-1]:
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            return
    if tokens and isinstance(node, dict):
        node.pop(tokens[-1], None)


# ---------------------------------------------------------------------- field managers

_ACTING = threading.local()


@contextlib.contextmanager
def writing_as(manager: str | None) -> Iterator[None]:
    """Name the field manager of this thread's writes that name none, as a controller's client names itself
    (kube-controller-manager, kube-scheduler, kubelet, a DRA driver): their managedFields record it."""
    before = getattr(_ACTING, "manager", None)
    _ACTING.manager = manager
    try:
        yield
    finally:
        _ACTING.manager = before


def acting_manager() -> str | None:
    """The field manager `writing_as` names for this thread's writes now (None: none named)."""
    return getattr(_ACTING, "manager", None)


def _acting_manager(given: str | None) -> str | None:
    return given or acting_manager()


# ---------------------------------------------------------------------- patching


def _record_manager(
    resource: ResourceDef,
    old: Obj | None,
    new: Obj,
    field_manager: str,
    subresource: str | None,
    decoded: Obj | None = None,
) -> Obj:
    """Give `field_manager` the fields this non-apply write set (managedFields, operation Update)."""
    return patching.record_update(
        resource, old, new, field_manager=field_manager, subresource=subresource, decoded=decoded
    )


def _decoded_for_create(resource: ResourceDef, obj: Obj, now: str) -> Obj:
    """`obj` as a create request decodes to: the scheme's defaults (a namespace's name label among them),
    none of what admission or the registry's strategy adds (a pod's service account, tolerations and token
    volume, its priority, a taint's timeAdded, a service's cluster IP)."""
    decoded: Obj = clone(obj)
    if resource.plural == "namespaces" and isinstance(decoded.get("metadata"), dict):
        labels = decoded["metadata"].setdefault("labels", {})
        if isinstance(labels, dict):
            labels["kubernetes.io/metadata.name"] = decoded["metadata"].get("name")
    canonical_quantities(resource.group, resource.version, resource.kind, decoded)
    defaulting.normalize_times(decoded)
    defaulting.apply_defaults(resource.plural, decoded, None, now, admission=False)
    drop_empty_collections(resource.group, resource.version, resource.kind, decoded)
    return decoded


def _apply(
    resource: ResourceDef,
    current: Obj,
    body: bytes,
    content_type: str,
    field_manager: str | None,
    force: bool,
    subresource: str | None,
    *,
    private: bool = False,
) -> Obj:
    try:
        return patching.apply_patch(
            resource,
            current,
            body,
            content_type,
            field_manager=field_manager,
            force=force,
            subresource=subresource,
            private=private,
        )
    except patching.PatchError as error:
        if error.detail:
            log.info("patch of %s %r refused: %s", resource.plural, (current or {}).get("metadata", {}).get("name"),
                     error.detail)  # fmt: skip
        details: Obj | None = None
        if error.causes:
            details = {"name": str((current.get("metadata") or {}).get("name", ""))}
            if resource.group:
                details["group"] = resource.group
            details["kind"] = resource.plural
            details["causes"] = list(error.causes)
        raise ApiError(error.status, error.reason, error.message, details) from error
