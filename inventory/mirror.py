"""Keep the database equal to the cluster.

One `Reflector` thread per kind feeds a queue; one writer thread drains it in batches and applies each
batch in a single transaction: upsert/delete `KubeObject` rows (a re-list is a diff keyed by uid that
deletes what is gone), recompute the derived rows that depend on what changed (`mirror_derive`), update
`WatchState`, and broadcast one `inventory.changed` message per batch after commit.

The message (group "inventory"; the documented stream of inventory changes):

    {"type": "inventory.changed",
     "kinds": ["devicetaintrules", "resourceslices"],            # kinds touched, sorted
     "changes": [{"kind", "type": "MODIFIED"|"DELETED", "uid", "name", "namespace"}, …],  # ≤ 500
     "truncated": false, "count": 2,                              # count = all changes in the batch
     "rv": {"<kind>": "<resourceVersion applied>"}}

ADDED and MODIFIED both arrive as "MODIFIED" (an upsert); a re-list reports only what differed.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from django.db import connection, transaction
from django.db.models import Count

from dradash.realtime import broadcast
from inventory import mirror_derive as derive
from inventory import mirror_sql
from inventory.kube import KIND, KubeClient, KubeError, connect
from inventory.models import (
    WATCH_ERROR,
    WATCH_STOPPED,
    Device,
    KubeObject,
    WatchState,
)
from inventory.reflector import Health, Reflector
from inventory.signals import mirror_batch_committed

log = logging.getLogger(__name__)

JSON = dict[str, Any]
GROUP = "inventory"
ANALYZE_AFTER = 2000
ANALYZE_SQL = (
    "ANALYZE inventory_kubeobject, inventory_device, inventory_pool, inventory_claim, inventory_allocation"
)
MAX_CHANGES_PER_MESSAGE = 500
TAINT_CHUNK = 1000  # devices per deferred taint-recompute transaction
DEFAULT_KINDS = list(KIND)


@dataclass
class Replace:
    kind: str
    items: list[JSON]
    resource_version: str
    received_at: float = field(default_factory=time.time)


@dataclass
class Event:
    kind: str
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK
    obj: JSON
    resource_version: str
    received_at: float = field(default_factory=time.time)


@dataclass
class HealthUpdate:
    kind: str
    health: Health


Op = Replace | Event | HealthUpdate


@dataclass
class BatchResult:
    changes: list[JSON]
    kinds: list[str]
    resource_versions: dict[str, str]


def _uid(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def index_key(kind: str, obj: JSON) -> str:
    spec = obj.get("spec") or {}
    if kind == "resourceslices":
        return f"{spec.get('driver', '')}/{(spec.get('pool') or {}).get('name', '')}"
    if kind == "pods":
        return str(spec.get("nodeName") or "")
    return ""


OBJECT_FIELDS = [
    "kind",
    "uid",
    "name",
    "namespace",
    "resource_version",
    "generation",
    "creation_timestamp",
    "index_key",
    "raw",
    "mirrored_at",
]


def to_row(kind: str, obj: JSON, now: datetime) -> SimpleNamespace:
    meta = obj.get("metadata") or {}
    generation = meta.get("generation")
    return SimpleNamespace(
        kind=kind,
        uid=str(meta.get("uid", "")),
        name=str(meta.get("name", "")),
        namespace=str(meta.get("namespace", "") or ""),
        resource_version=str(meta.get("resourceVersion", "")),
        generation=int(generation) if isinstance(generation, int) else None,
        creation_timestamp=str(meta.get("creationTimestamp", "") or ""),
        index_key=index_key(kind, obj),
        raw=obj,
        mirrored_at=now,
    )


class BatchWriter:
    """Applies ops to the database. Not thread-safe: exactly one writer per process."""

    def __init__(self, *, group: str = GROUP) -> None:
        self.group = group
        self._matchers: dict[tuple[str, str], tuple[derive.ClassMatcher, str]] = {}
        self._reporting: dict[str, set[derive.DeviceKey]] | None = None
        # Rule selectors whose devices still need their effective taints recomputed, and how far
        # (device pk) that recompute got. See `refresh_deferred`.
        self._taint_selectors: list[JSON | None] = []
        self._taint_cursor = 0
        self._defer = False

    def _pod_reports(self) -> dict[str, set[derive.DeviceKey]]:
        if self._reporting is None:
            reporting: dict[str, set[derive.DeviceKey]] = defaultdict(set)
            for driver, pool, name, reports in Device.objects.exclude(health_reports={}).values_list(
                "driver", "pool", "name", "health_reports"
            ):
                for pod_uid in reports or {}:
                    reporting[pod_uid].add((driver, pool, name))
            self._reporting = dict(reporting)
        return self._reporting

    @property
    def has_deferred(self) -> bool:
        return bool(self._taint_selectors)

    def refresh_deferred(self, *, chunk: int = TAINT_CHUNK) -> bool:
        """Recompute the next `chunk` devices' effective taints for rules that changed; True while more
        remain. One transaction and one broadcast per chunk, so watch events queued meanwhile wait for
        one chunk (~0.1 s), not for thousands of devices — a rule over 8,000 GPUs takes ~1 s."""
        if not self._taint_selectors:
            return False
        with transaction.atomic():
            ctx = derive.Context.load(self._matchers)
            last = derive.refresh_taints(self._taint_selectors, ctx, after_pk=self._taint_cursor, limit=chunk)
            if last is None:
                self._taint_selectors, self._taint_cursor = [], 0
            else:
                self._taint_cursor = last
            broadcast(self.group, {"type": "inventory.changed", "kinds": ["devicetaintrules"], "changes": [],
                                   "truncated": False, "count": 0, "rv": {}})  # fmt: skip
        return bool(self._taint_selectors)

    def apply(self, ops: Iterable[Op], *, defer: bool = False) -> BatchResult:
        """Apply `ops` in one transaction. `defer`: leave large taint recomputes to `refresh_deferred`
        (the write loop interleaves them with new events); otherwise they are finished before returning."""
        self._defer = defer
        result = self._apply_batch(ops)
        if not defer:
            while self.refresh_deferred(chunk=1_000_000):
                pass
        return result

    def _apply_batch(self, ops: Iterable[Op]) -> BatchResult:
        ops = list(ops)
        with transaction.atomic():
            result = self._apply(ops)
            if result.changes:
                broadcast(self.group, _message(result))
                changes = result.changes
                transaction.on_commit(lambda: _announce(changes))
        relisted = any(isinstance(op, Replace) for op in ops)
        if relisted and len(result.changes) >= ANALYZE_AFTER and connection.vendor == "postgresql":
            # A bulk load leaves PostgreSQL's planner statistics empty (it then guesses 24 rows for
            # 8,000 and sorts whole rows on disk) until autovacuum comes by; refresh them now. Only
            # after a (re-)list: a second of ANALYZE in the steady state would delay the next events.
            with connection.cursor() as cursor:
                cursor.execute(ANALYZE_SQL)
        return result

    def _apply(self, ops: list[Op]) -> BatchResult:
        now = datetime.now(UTC)
        pending: dict[tuple[str, str], JSON | None] = {}
        rvs: dict[str, str] = {}
        replaced: set[str] = set()
        received: dict[str, float] = {}
        health: dict[str, Health] = {}
        for op in ops:
            if isinstance(op, HealthUpdate):
                health[op.kind] = op.health
                continue
            received.setdefault(op.kind, op.received_at)
            rvs[op.kind] = op.resource_version
            if isinstance(op, Replace):
                replaced.add(op.kind)
                self._diff_replace(op, pending)
            elif op.type in ("ADDED", "MODIFIED"):
                pending[(op.kind, _uid(op.obj))] = op.obj
            elif op.type == "DELETED":
                pending[(op.kind, _uid(op.obj))] = None
            # BOOKMARK: only the resourceVersion moves.

        by_kind: dict[str, dict[str, JSON | None]] = defaultdict(dict)
        for (kind, uid), obj in pending.items():
            if uid:
                by_kind[kind][uid] = obj
        old = self._old_state(by_kind)
        changes = self._write_objects(by_kind, old["names"], now)
        self._derive(by_kind, old)
        self._write_watch_state(rvs, received, replaced, health, now)
        kinds = sorted({c["kind"] for c in changes})
        return BatchResult(changes=changes, kinds=kinds, resource_versions=rvs)

    def _diff_replace(self, op: Replace, pending: dict[tuple[str, str], JSON | None]) -> None:
        current = dict(KubeObject.objects.filter(kind=op.kind).values_list("uid", "resource_version"))
        for (kind, uid), obj in pending.items():
            if kind == op.kind:
                if obj is None:
                    current.pop(uid, None)
                else:
                    current[uid] = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        listed = set()
        for item in op.items:
            uid = _uid(item)
            listed.add(uid)
            if current.get(uid) != str((item.get("metadata") or {}).get("resourceVersion", "")):
                pending[(op.kind, uid)] = item
        for uid in set(current) - listed:
            pending[(op.kind, uid)] = None

    def _old_state(self, by_kind: dict[str, dict[str, JSON | None]]) -> dict[str, Any]:
        """What the derived rows need to know about the objects before this batch."""
        names: dict[tuple[str, str], tuple[str, str]] = {}
        slice_pools: dict[str, str] = {}
        rule_selectors: list[JSON | None] = []
        rule_specs: dict[str, JSON] = {}
        for kind, objs in by_kind.items():
            deleted = [uid for uid, obj in objs.items() if obj is None]
            fields = ["uid", "name", "namespace", "index_key"]
            if kind == "devicetaintrules":
                fields.append("raw")
            for batch in derive.chunks(
                deleted if kind != "devicetaintrules" and kind != "resourceslices" else objs
            ):
                for row in KubeObject.objects.filter(kind=kind, uid__in=batch).values(*fields):
                    names[(kind, row["uid"])] = (row["name"], row["namespace"])
                    if kind == "resourceslices":
                        slice_pools[row["uid"]] = row["index_key"]
                    if kind == "devicetaintrules":
                        spec = row["raw"].get("spec") or {}
                        rule_specs[row["uid"]] = spec
                        if objs.get(row["uid"]) is None or (objs[row["uid"]] or {}).get("spec") != spec:
                            rule_selectors.append(spec.get("deviceSelector"))
        return {
            "names": names,
            "slice_pools": slice_pools,
            "rule_selectors": rule_selectors,
            "rule_specs": rule_specs,
        }

    def _write_objects(
        self,
        by_kind: dict[str, dict[str, JSON | None]],
        old_names: dict[tuple[str, str], tuple[str, str]],
        now: datetime,
    ) -> list[JSON]:
        changes: list[JSON] = []
        for kind, objs in by_kind.items():
            deleted = [uid for uid, obj in objs.items() if obj is None]
            for batch in derive.chunks(deleted):
                KubeObject.objects.filter(kind=kind, uid__in=batch).delete()
            rows = [to_row(kind, obj, now) for obj in objs.values() if obj is not None]
            mirror_sql.upsert(KubeObject, rows, fields=OBJECT_FIELDS, conflict=["kind", "uid"])
            for uid, obj in objs.items():
                if obj is None:
                    name, namespace = old_names.get((kind, uid), ("", ""))
                    changes.append(
                        {"kind": kind, "type": "DELETED", "uid": uid, "name": name, "namespace": namespace}
                    )
                else:
                    meta = obj.get("metadata") or {}
                    changes.append(
                        {
                            "kind": kind,
                            "type": "MODIFIED",
                            "uid": uid,
                            "name": meta.get("name", ""),
                            "namespace": meta.get("namespace", "") or "",
                        }
                    )
        return changes

    def _derive(self, by_kind: dict[str, dict[str, JSON | None]], old: dict[str, Any]) -> None:
        if not any(
            k in by_kind
            for k in ("resourceslices", "devicetaintrules", "deviceclasses", "resourceclaims", "pods")
        ):
            return
        ctx = derive.Context.load(self._matchers)
        claims = by_kind.get("resourceclaims", {})
        claim_keys = derive.replace_claims(claims) if claims else set()

        slices = by_kind.get("resourceslices", {})
        pool_keys: set[str] = set()
        gone_slices: set[str] = set()
        for uid, obj in slices.items():
            if uid in old["slice_pools"]:
                pool_keys.add(old["slice_pools"][uid])
            if obj is None:
                gone_slices.add(uid)
            else:
                pool_keys.add(index_key("resourceslices", obj))
        fresh = {uid: obj for uid, obj in slices.items() if obj is not None}
        rebuilt = derive.recompute_pools(
            pool_keys, gone_slices, ctx, fresh=fresh
        )  # fills taints, classes, allocations

        if "devicetaintrules" in by_kind:
            # Only a rule whose spec changed moves taints: the eviction controller rewrites status
            # conditions every few seconds, and a rule may select thousands of devices.
            selectors = list(old["rule_selectors"])
            selectors += [
                (o.get("spec") or {}).get("deviceSelector")
                for uid, o in by_kind["devicetaintrules"].items()
                if o is not None and o.get("spec") != old["rule_specs"].get(uid)
            ]
            if selectors:
                # Restart from the first device with the union: recomputing is idempotent, and a rule
                # that changes again mid-way must not leave devices computed from its old spec.
                self._taint_selectors = [*self._taint_selectors, *selectors]
                self._taint_cursor = 0
        if "deviceclasses" in by_kind:
            derive.refresh_classes(ctx, skip=rebuilt)
        if claim_keys - rebuilt:
            derive.refresh_allocations(claim_keys - rebuilt)
        if "pods" in by_kind:
            derive.refresh_health(by_kind["pods"], self._pod_reports())

    def _write_watch_state(
        self,
        rvs: dict[str, str],
        received: dict[str, float],
        replaced: set[str],
        health: dict[str, Health],
        now: datetime,
    ) -> None:
        kinds = set(rvs) | set(health)
        if not kinds:
            return
        states = {w.kind: w for w in WatchState.objects.filter(kind__in=kinds)}
        counts = dict(
            KubeObject.objects.filter(kind__in=kinds)
            .values("kind")
            .annotate(n=Count("id"))
            .values_list("kind", "n")
        )
        for kind in kinds:
            state = states.get(kind) or WatchState(kind=kind)
            if kind in rvs and rvs[kind]:
                state.resource_version = rvs[kind]
                state.last_event_at = now
                state.lag_seconds = max(0.0, now.timestamp() - received[kind])
            if kind in replaced:
                state.last_sync_at = now
            if kind in health:
                h = health[kind]
                state.state = h.state
                state.error = h.error[:2000]
                state.relist_count = h.relists
                if h.resource_version:
                    state.resource_version = h.resource_version
            state.object_count = counts.get(kind, 0)
            state.save()


def _announce(changes: list[JSON]) -> None:
    try:
        mirror_batch_committed.send(sender=BatchWriter, changes=changes)
    except Exception:  # a receiver's bug must not stop the mirror
        log.exception("a mirror_batch_committed receiver failed")


def _message(result: BatchResult) -> JSON:
    changes = result.changes[:MAX_CHANGES_PER_MESSAGE]
    return {
        "type": "inventory.changed",
        "kinds": result.kinds,
        "changes": changes,
        "truncated": len(result.changes) > len(changes),
        "count": len(result.changes),
        "rv": result.resource_versions,
    }


# --------------------------------------------------------------------------------------- threads


class QueueSink:
    """The reflectors' sink: everything goes through one queue to the single writer."""

    def __init__(self, q: queue.Queue[Op]) -> None:
        self.q = q

    def replace(self, kind: str, items: list[JSON], resource_version: str) -> None:
        self.q.put(Replace(kind, items, resource_version))

    def apply(self, kind: str, event_type: str, obj: JSON, resource_version: str) -> None:
        self.q.put(Event(kind, event_type, obj, resource_version))

    def health(self, kind: str, health: Health) -> None:
        self.q.put(HealthUpdate(kind, replace(health)))


def record_cluster_info(client: KubeClient, missing: list[str]) -> None:
    """Remember what the server serves (the overview shows it); best effort, discovery may be denied."""
    from inventory.models import ClusterInfo

    try:
        version, api_versions = client.server_version(), client.api_versions()
    except KubeError as exc:
        log.warning("could not read the server's version and API groups: %s", exc)
        return
    ClusterInfo.objects.update_or_create(
        pk=1,
        defaults={
            "server": str(getattr(client, "host", "") or ""),
            "version": {k: str(v)[:200] for k, v in version.items()},
            "api_versions": [v[:200] for v in api_versions[:500]],
            "missing_kinds": missing,
        },
    )


def served_kinds(client: KubeClient, kinds: list[str]) -> tuple[list[str], list[str]]:
    """(served, not served) — e.g. v1alpha3 ResourcePoolStatusRequests only behind an alpha gate."""
    served: list[str] = []
    missing: list[str] = []
    cache: dict[str, set[str]] = {}
    for kind in kinds:
        gv = KIND[kind].group_version
        if gv not in cache:
            cache[gv] = client.served_resources(gv)
        (served if kind in cache[gv] else missing).append(kind)
    return served, missing


@dataclass
class MirrorHandle:
    """A running mirror: reflector threads + the writer thread."""

    stop_event: threading.Event
    threads: list[threading.Thread]
    reflectors: list[Reflector]
    writer: threading.Thread
    queue: queue.Queue[Op]
    applied_batches: int = 0
    applied_ops: int = 0
    last_error: str = ""

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        for reflector in self.reflectors:
            reflector.stop()
        self.writer.join(timeout)

    def is_alive(self) -> bool:
        return self.writer.is_alive()


class Mirror:
    def __init__(
        self,
        client: KubeClient,
        *,
        kinds: list[str] | None = None,
        batch_max: int = 5000,
        watch_timeout_seconds: int = 300,
        inactivity_timeout: float = 120.0,
        page_size: int = 500,
    ) -> None:
        self.client = client
        self.kinds = kinds or DEFAULT_KINDS
        self.batch_max = batch_max
        self.watch_timeout_seconds = watch_timeout_seconds
        self.inactivity_timeout = inactivity_timeout
        self.page_size = page_size
        self.writer = BatchWriter()

    def _list_fn(self, kind: str) -> Callable[[], tuple[list[JSON], str]]:
        return lambda: self.client.list_all(kind, page_size=self.page_size)

    def _watch_fn(self, kind: str) -> Callable[[str, int], Iterable[tuple[str, JSON]]]:
        def watch(rv: str, timeout: int) -> Iterable[tuple[str, JSON]]:
            # Real servers send a BOOKMARK about every minute; twice that without a byte means a dead link.
            return self.client.watch_objects(
                kind,
                resource_version=rv,
                timeout_seconds=timeout,
                allow_bookmarks=True,
                read_timeout=self.inactivity_timeout,
            )

        return watch

    def sync_once(self) -> BatchResult:
        """List every served kind and write it all in one transaction (`mirror --once`)."""
        served, missing = served_kinds(self.client, self.kinds)
        record_cluster_info(self.client, missing)
        ops: list[Op] = []
        for kind in served:
            items, rv = self.client.list_all(kind, page_size=self.page_size)
            ops.append(Replace(kind, items, rv))
            ops.append(HealthUpdate(kind, Health(kind=kind, state="synced", resource_version=rv)))
        for kind in missing:
            ops.append(
                HealthUpdate(kind, Health(kind=kind, state=WATCH_STOPPED, error="not served by this server"))
            )
        return self.writer.apply(ops)

    def start(self, stop_event: threading.Event | None = None, *, resume: bool = False) -> MirrorHandle:
        """Start one reflector thread per served kind and the writer.

        resume=True watches from the resourceVersions stored in WatchState (written in the same
        transaction as the data), skipping the initial list; a 410 falls back to a re-list.
        """
        stop = stop_event or threading.Event()
        resume_from: dict[str, str] = {}
        if resume:
            resume_from = dict(
                WatchState.objects.exclude(resource_version="").values_list("kind", "resource_version")
            )
        q: queue.Queue[Op] = queue.Queue()
        sink = QueueSink(q)
        try:
            served, missing = served_kinds(self.client, self.kinds)
            record_cluster_info(self.client, missing)
        except KubeError as exc:
            log.warning("discovery failed (%s); watching every kind", exc)
            served, missing = list(self.kinds), []
        for kind in missing:
            q.put(
                HealthUpdate(kind, Health(kind=kind, state=WATCH_STOPPED, error="not served by this server"))
            )
        reflectors = [
            Reflector(
                kind=kind,
                list_fn=self._list_fn(kind),
                watch_fn=self._watch_fn(kind),
                sink=sink,
                stop=stop,
                watch_timeout_seconds=self.watch_timeout_seconds,
                resume_from=resume_from.get(kind, ""),
            )
            for kind in served
        ]
        threads = [
            threading.Thread(target=r.run, name=f"reflector-{r.kind}", daemon=True) for r in reflectors
        ]
        handle = MirrorHandle(
            stop_event=stop, threads=threads, reflectors=reflectors, writer=threading.Thread(), queue=q
        )
        handle.writer = threading.Thread(
            target=self._write_loop, args=(handle,), name="mirror-writer", daemon=True
        )
        handle.writer.start()
        for thread in threads:
            thread.start()
        return handle

    def _write_loop(self, handle: MirrorHandle) -> None:
        try:
            while True:
                try:
                    # With a taint recompute pending, take queued events first, else do one chunk of it.
                    first = (
                        handle.queue.get_nowait()
                        if self.writer.has_deferred
                        else handle.queue.get(timeout=0.5)
                    )
                except queue.Empty:
                    if self.writer.has_deferred:
                        self._refresh_with_retry(handle)
                        continue
                    if handle.stop_event.is_set():
                        break
                    continue
                ops: list[Op] = [first]
                # Drain what is already queued: one transaction and one broadcast for a burst.
                while len(ops) < self.batch_max:
                    try:
                        ops.append(handle.queue.get_nowait())
                    except queue.Empty:
                        break
                self._apply_with_retry(handle, ops)
        finally:
            self._mark_stopped()
            connection.close()

    def _apply_with_retry(self, handle: MirrorHandle, ops: list[Op]) -> None:
        delay = 0.5
        while True:
            # One connection for the writer's life (not close_old_connections(): with CONN_MAX_AGE=0 it
            # reconnects for every batch, ~40 ms on PostgreSQL); a broken one fails the batch, is closed
            # below and replaced on the retry.
            try:
                self.writer.apply(ops, defer=True)
                for _ in ops:
                    handle.queue.task_done()
                handle.applied_batches += 1
                handle.applied_ops += len(ops)
                return
            except Exception as exc:  # the database went away: keep the batch and retry, do not lose events
                handle.last_error = str(exc)
                log.exception("mirror: applying %d ops failed; retrying in %.1fs", len(ops), delay)
                connection.close()
                if handle.stop_event.wait(delay):
                    for _ in ops:
                        handle.queue.task_done()
                    return
                delay = min(delay * 2, 30.0)

    def _refresh_with_retry(self, handle: MirrorHandle) -> None:
        try:
            self.writer.refresh_deferred()
        except Exception as exc:  # the database went away: the selectors stay queued, try again shortly
            handle.last_error = str(exc)
            log.exception("mirror: recomputing device taints failed; retrying")
            connection.close()
            handle.stop_event.wait(0.5)

    def _mark_stopped(self) -> None:
        try:
            WatchState.objects.exclude(state=WATCH_ERROR).update(state=WATCH_STOPPED)
        except Exception:
            log.debug("could not mark watches stopped", exc_info=True)


def start_mirror_thread(kubeconfig: str | None, context: str | None = None, **options: Any) -> MirrorHandle:
    """Run the mirror inside this process (the demo): returns a handle with `.stop()`."""
    client = connect(kubeconfig or None, context or None)
    return Mirror(client, **options).start()


def wait_for_sync(handle: MirrorHandle, *, timeout: float = 30.0) -> bool:
    """True once every reflector has listed and the writer has drained the queue."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(r.health.state == "synced" for r in handle.reflectors) and handle.queue.unfinished_tasks == 0:
            return True
        if not handle.is_alive():
            return False
        time.sleep(0.05)
    return False
