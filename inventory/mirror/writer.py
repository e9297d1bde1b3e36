"""Keep the database equal to the cluster: apply batches of reflector operations.

`BatchWriter.apply` writes one batch in a single transaction: upsert/delete `KubeObject` rows (a re-list
is a diff keyed by uid that deletes what is gone), recompute the derived rows that depend on what changed
(`inventory.mirror.derive`), update `WatchState`, and broadcast one `inventory.changed` message per
batch after commit. The threads that feed it live in `inventory.mirror.runner`.

The message (group "inventory"; the documented stream of inventory changes):

    {"type": "inventory.changed",
     "kinds": ["devicetaintrules", "resourceslices"],            # kinds touched, sorted
     "changes": [{"kind", "type": "MODIFIED"|"DELETED", "uid", "name", "namespace"}, …],  # ≤ 500
     "truncated": false, "count": 2,                              # count = all changes in the batch
     "rv": {"<kind>": "<resourceVersion applied>"}}

ADDED and MODIFIED both arrive as "MODIFIED" (an upsert); a re-list reports only what differed.
A change of a watch's state alone (synced → unreachable, …) sends the same message with
`"kinds": ["watchstate"]` and no changes, so the pages' status banner follows it.

A `Replace` says why it lists (`reason`): after a periodic resync or a detected reset of the API server
its diff is a divergence (objects missing, ghosts, stale), logged and counted in `WatchState.divergences`.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Model

from dra.availability import PoolAvailability
from dra.poolshape import PoolMemo
from dradash.realtime import broadcast
from inventory.mirror import sql
from inventory.mirror.derive.availability import pools_reached_by, pools_selected_by, recompute_availability
from inventory.mirror.derive.claims import ClaimChanges, refresh_allocations, replace_claims
from inventory.mirror.derive.classes import ClassMatcher, refresh_classes
from inventory.mirror.derive.common import DeviceKey, chunks, json_path
from inventory.mirror.derive.context import Context, RuleCache
from inventory.mirror.derive.health import refresh_health
from inventory.mirror.derive.pods import replace_pods
from inventory.mirror.derive.pools import recompute_pools
from inventory.mirror.derive.taints import refresh_taints
from inventory.mirror.reflector import RELISTING, RESET_REASONS, RESYNC, STARTING, SYNCED, Health
from inventory.models import Allocation, Claim, Device, DeviceAttribute, KubeObject, Pod, Pool, WatchState
from inventory.signals import mirror_batch_committed

log = logging.getLogger(__name__)

JSON = dict[str, Any]
GROUP = "inventory"
ANALYZE_AFTER = 2000
# Where autovacuum is off, the mirror vacuums its own tables as autovacuum would (dead row versions above
# 50 + 20 % of the live ones, its default thresholds), looking at most every VACUUM_CHECK_SECONDS.
VACUUM_CHECK_SECONDS = 10.0
# The tables a kind's (re-)list fills, whose planner statistics a large one leaves stale (`_listed`); any
# other kind fills only KubeObject.
ANALYZE_TABLES: dict[str, tuple[type[Model], ...]] = {
    "resourceslices": (KubeObject, Device, Pool, DeviceAttribute),
    "resourceclaims": (KubeObject, Claim, Allocation),
    "pods": (KubeObject, Pod),
}
# Every table a list fills: those `vacuum_if_needed` looks after.
MIRROR_TABLES = sorted({model._meta.db_table for models in ANALYZE_TABLES.values() for model in models})
# The filled tables whose statistics a kind's list reads while its pages are derived, where that is not
# all of them: such a list begins without waiting for the others' ANALYZE (`_gather_statistics`). A pod
# page looks its objects and Pod rows up by uid and its devices by key (unique indexes: the planner needs no
# statistics for them); the kinds with nothing derived read only their own rows, by uid.
LIST_READS: dict[str, tuple[type[Model], ...]] = {
    "pods": (),
    "resourceclaimtemplates": (),
    "poddisruptionbudgets": (),
    "resourcepoolstatusrequests": (),
}
MAX_CHANGES_PER_MESSAGE = 500
BULK_GC_ITEMS = 1000  # a re-list this long pauses the cyclic GC while it is written (`bulk_gc`)
BULK_GC_YOUNG = 200_000  # objects new since the last collection that make a paused list collect them
TAINT_CHUNK = 1000  # devices per deferred taint-recompute transaction
# Pools whose availability a batch of slice or claim changes recomputes itself; more wait for
# `refresh_deferred`, in chunks.
AVAILABILITY_INLINE = 64
INLINE_KINDS = ("resourceslices", "resourceclaims")
AVAILABILITY_CHUNK = 100


@dataclass
class Replace:
    kind: str
    items: list[JSON]
    resource_version: str
    received_at: float = field(default_factory=time.time)
    reason: str = ""  # reflector.INITIAL, EXPIRED, RESYNC or one of RESET_REASONS


WATCH_STATE_KIND = "watchstate"  # the pseudo-kind of a broadcast that only a watch's state changed


@dataclass
class Divergence:
    """What a re-list found different from the database: objects it lacked, held but gone, or held old."""

    missing: int = 0
    ghosts: int = 0
    stale: int = 0

    @property
    def total(self) -> int:
        return self.missing + self.ghosts + self.stale


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
class ListBegin:
    """A reflector's list, page by page (`BatchWriter.apply_list_op`): begin, pages, end or abandon."""

    kind: str
    reason: str


@dataclass
class ListPage:
    kind: str
    items: list[JSON]
    slot: threading.Semaphore | None = None  # released once written: the sink's bound on pages in flight


@dataclass
class ListEnd:
    kind: str
    resource_version: str
    reason: str


@dataclass
class ListAbandon:
    kind: str


ListOp = ListBegin | ListPage | ListEnd | ListAbandon
LIST_OPS = (ListBegin, ListPage, ListEnd, ListAbandon)


@dataclass
class BatchResult:
    changes: list[JSON]
    kinds: list[str]
    resource_versions: dict[str, str]
    states_changed: list[str] = field(default_factory=list)  # kinds whose WatchState.state changed
    total: int | None = None  # changes written when `changes` holds only some (a list written page by page)

    @property
    def count(self) -> int:
        return len(self.changes) if self.total is None else self.total


@dataclass
class _Listing:
    """A (re-)list of one kind being written page by page (`BatchWriter.begin_list`)."""

    kind: str
    reason: str
    # The mirror never held this kind (no rows, never synced): the pages are what was there, not changes.
    baseline: bool
    seen: set[str] = field(default_factory=set)
    divergence: Divergence = field(default_factory=Divergence)
    changes: int = 0
    first_changes: list[JSON] = field(default_factory=list)
    received_at: float = 0.0


_gc_lock = threading.Lock()
_gc_paused = 0
_gc_was_enabled = True
_gc_collect = False


@contextmanager
def bulk_gc(*, collect: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while a (re-)list is decoded and written, then collect once and
    freeze what survives.

    A list of 100,000 devices is millions of small dicts and lists that all live on; every full
    collection walks them again (15–18 % of the initial sync, measured). Decoded JSON holds no cycles,
    so reference counting frees the garbage meanwhile; one collection afterwards catches the rest, and
    `gc.freeze()` moves the survivors (the mirror's caches, Django's and the modules') out of the
    generations so later collections skip them. Re-entrant and process-wide (the collector is).

    `collect=False` skips that collection (unless another caller inside the same pause wants it): for
    a window that only decodes JSON, where it finds next to nothing (measured: 44 objects after a
    fresh what-if snapshot load, 0 after an incremental one) but walks everything (1.2 s at 100,000 devices).
    """
    global _gc_paused, _gc_was_enabled, _gc_collect
    with _gc_lock:
        _gc_paused += 1
        if _gc_paused == 1:
            _gc_was_enabled = gc.isenabled()
            _gc_collect = False
            gc.disable()
        _gc_collect = _gc_collect or collect
    try:
        yield
    finally:
        with _gc_lock:
            _gc_paused -= 1
            if _gc_paused == 0:
                if _gc_collect:
                    gc.collect()
                gc.freeze()
                if _gc_was_enabled:
                    gc.enable()


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
        self._matchers: dict[tuple[str, str], tuple[ClassMatcher, str]] = {}
        self._rules = RuleCache()
        # Availability answers of pools that look the same up to names (`dra.poolshape`), across batches.
        self._pool_memo: PoolMemo[PoolAvailability] = PoolMemo()
        self._reporting: dict[str, set[DeviceKey]] | None = None
        # Rule selectors whose devices still need their effective taints recomputed, and how far
        # (device pk) that recompute got. See `refresh_deferred`.
        self._taint_selectors: list[JSON | None] = []
        self._taint_cursor = 0
        # Pools whose availability (dra.availability) still needs recomputing, and the kinds that asked.
        self._availability_pools: set[str] = set()
        self._vacuum_checked = 0.0
        self._autovacuum: bool | None = None
        # Tables a large list filled, still to VACUUM once the writer is idle (`vacuum_listed`), and those
        # of them whose planner statistics are still to gather (before a list that reads them, or then).
        self._vacuum_listed: set[str] = set()
        self._stale_statistics: set[str] = set()
        self._availability_kinds: set[str] = set()
        self._listing: dict[str, _Listing] = {}
        # The resourceVersion each kind's WatchState holds as of this writer's last commit (`lost_commits`).
        self._committed_rvs: dict[str, str] = {}

    def _on_commit_rv(self, kind: str, resource_version: str) -> None:
        transaction.on_commit(lambda: self._committed_rvs.__setitem__(kind, resource_version))

    def lost_commits(self) -> list[str]:
        """Kinds whose WatchState no longer holds the resourceVersion this writer last committed: the
        database lost commits it had acknowledged (a crash with `synchronous_commit = off`, a failover to an
        asynchronous replica). Their events are gone from the database and the reflectors, which went on,
        will not send them again: only a mirror resuming from what the database holds replays them."""
        held = dict(
            WatchState.objects.filter(kind__in=list(self._committed_rvs)).values_list(
                "kind", "resource_version"
            )
        )
        return sorted(kind for kind, rv in self._committed_rvs.items() if held.get(kind, "") != rv)

    def _pod_reports(self) -> dict[str, set[DeviceKey]]:
        if self._reporting is None:
            reporting: dict[str, set[DeviceKey]] = defaultdict(set)
            for driver, pool, name, reports in Device.objects.exclude(health_reports={}).values_list(
                "driver", "pool", "name", "health_reports"
            ):
                for pod_uid in reports or {}:
                    reporting[pod_uid].add((driver, pool, name))
            self._reporting = dict(reporting)
        return self._reporting

    @property
    def has_deferred(self) -> bool:
        # Not while a list is being written page by page: its later pages (claims after slices) would
        # ask for the same pools again; the work waits for the end of the list.
        return bool(self._taint_selectors or self._availability_pools) and not self._listing

    def refresh_deferred(self, *, chunk: int = TAINT_CHUNK) -> bool:
        """Recompute the next `chunk` devices' effective taints for rules that changed, else the next
        AVAILABILITY_CHUNK pools' availability; True while more remain. One transaction and one
        broadcast per chunk, so watch events queued meanwhile wait for one chunk (~0.1 s), not for
        thousands of devices — a rule over 8,000 GPUs takes ~1 s."""
        if self._taint_selectors:
            with _mirror_transaction():
                ctx = Context.load(self._matchers, self._rules, self._pool_memo)
                last = refresh_taints(self._taint_selectors, ctx, after_pk=self._taint_cursor, limit=chunk)
                if last is None:
                    self._taint_selectors, self._taint_cursor = [], 0
                else:
                    self._taint_cursor = last
                _broadcast_derived(self.group, ["devicetaintrules"])
        elif self._availability_pools:
            pools = sorted(self._availability_pools)[: max(1, min(chunk, AVAILABILITY_CHUNK))]
            with _mirror_transaction():
                recompute_availability(pools, Context.load(self._matchers, self._rules, self._pool_memo))
                # Device rows changed: pages that show devices listen to their slices' kind.
                _broadcast_derived(self.group, sorted(self._availability_kinds | {"resourceslices"}))
            self._availability_pools.difference_update(pools)
            if not self._availability_pools:
                self._availability_kinds = set()
        if not self.has_deferred:
            self.vacuum_if_needed()
        return self.has_deferred

    def vacuum_if_needed(self, *, now: float | None = None) -> list[str]:
        """PostgreSQL with autovacuum off: VACUUM (ANALYZE) the mirror's tables whose dead row versions
        passed autovacuum's default threshold, as autovacuum would have. Without it a rule over every GPU
        leaves 80,000 dead versions of 100,000 device rows: every count reads the whole table (110 ms
        instead of 10). Looks at most every VACUUM_CHECK_SECONDS, never inside a transaction (where VACUUM
        cannot run). Also VACUUMs what the lists filled (`vacuum_listed`) once no list is running, for a
        writer never idle long enough to do it then. Returns the tables vacuumed."""
        moment = time.monotonic() if now is None else now
        if (
            connection.vendor != "postgresql"
            or connection.in_atomic_block
            or moment - self._vacuum_checked < VACUUM_CHECK_SECONDS
        ):
            return []
        self._vacuum_checked = moment
        listed = self.vacuum_listed() if not self._listing else []
        with connection.cursor() as cursor:
            if self._autovacuum is None:
                cursor.execute("SELECT current_setting('autovacuum') = 'on'")
                self._autovacuum = bool(cursor.fetchone()[0])
            if self._autovacuum:
                return listed
            cursor.execute(
                "SELECT relname FROM pg_stat_user_tables WHERE relname = ANY(%s)"
                " AND n_dead_tup > 50 + 0.2 * n_live_tup ORDER BY relname",
                [MIRROR_TABLES],
            )
            tables = [row[0] for row in cursor.fetchall()]
            if tables:
                cursor.execute("VACUUM (ANALYZE) " + ", ".join(tables))
        return sorted(set(listed) | set(tables))

    @property
    def has_vacuum_listed(self) -> bool:
        return bool(self._vacuum_listed)

    def vacuum_listed(self) -> list[str]:
        """VACUUM the tables large lists filled, and first ANALYZE those whose statistics no later list
        needed before (`_gather_statistics`): the VACUUM marks their pages all-visible, so that a count
        reads an index instead of the table (100,000 devices: 145 ms → 10 ms). Left until the writer is
        idle — after the sync, not between its kinds, where it held back the next kinds' lists and every
        event (0.4 s at 10,000 devices). Inside a transaction, where VACUUM cannot run, only the
        statistics. Returns the tables vacuumed."""
        if connection.vendor != "postgresql":
            return []
        self._gather_statistics()
        if connection.in_atomic_block or not self._vacuum_listed:
            return []
        tables = sorted(self._vacuum_listed)
        with connection.cursor() as cursor:
            cursor.execute("VACUUM " + ", ".join(tables))
        self._vacuum_listed.clear()
        return tables

    def _listed(self, kinds: list[str]) -> None:
        """These kinds' large lists filled their tables: a bulk load leaves PostgreSQL's planner
        statistics empty or stale (it then guesses 24 rows for 8,000 and sorts whole rows on disk) until
        autovacuum comes by, which may be off or late. They are gathered before the next list that reads
        those tables (`_gather_statistics`), else with the VACUUM once the writer is idle: after the
        initial sync's last kind (pods) they cost the sync nothing. Only after a (re-)list: a second of it
        in the steady state would delay the next events. The document columns have no statistics to
        gather (migration 0015)."""
        if connection.vendor != "postgresql":
            return
        tables = {model._meta.db_table for kind in kinds for model in ANALYZE_TABLES.get(kind, (KubeObject,))}
        self._vacuum_listed |= tables
        self._stale_statistics |= tables

    def _gather_statistics(self, kind: str | None = None) -> list[str]:
        """ANALYZE the listed tables whose statistics are stale: those `kind`'s list reads (`LIST_READS`;
        all of them by default), before its first page, or all of them. Returns those tables."""
        stale = self._stale_statistics
        tables = sorted(stale & {m._meta.db_table for m in LIST_READS[kind]} if kind in LIST_READS else stale)
        if tables:
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE " + ", ".join(tables))
            stale.difference_update(tables)
        return tables

    def apply(self, ops: Iterable[Op], *, defer: bool = False) -> BatchResult:
        """Apply `ops` in one transaction. `defer`: leave large taint recomputes to `refresh_deferred`
        (the write loop interleaves them with new events); otherwise they are finished before returning."""
        ops = list(ops)
        if any(isinstance(op, Replace) and len(op.items) >= BULK_GC_ITEMS for op in ops):
            with bulk_gc():
                result = self._apply_batch(ops)
        else:
            result = self._apply_batch(ops)
        if defer:
            self.vacuum_if_needed()
        else:
            while self.refresh_deferred(chunk=1_000_000):  # the last one looks for dead rows too
                pass
            self.vacuum_listed()
        return result

    # ------------------------------------------------------------------ a list, page by page

    def begin_list(self, kind: str, *, reason: str) -> None:
        """Start writing a (re-)list of `kind` page by page (`write_page`, then `finish_list`).

        Until `finish_list` the kind is not "synced" and its WatchState holds no resourceVersion: pages
        commit one by one (a 100,000-device list neither sits in memory nor holds SQLite's write lock for
        minutes), so a mirror stopped mid-way must re-list on resume, never watch from a state it holds
        only in part; the rows of earlier pages show with the status banner saying so.

        A resync is the exception: it lists at exactly the resourceVersion the rows hold (or, when the
        server's history no longer has it, at the newest), so every page only repairs what diverged and
        the kind stays synced, at its resourceVersion, until `finish_list` records the list's."""
        self._gather_statistics(kind)
        if reason == RESYNC:
            self._listing[kind] = _Listing(kind=kind, reason=reason, baseline=False)
            return
        now = datetime.now(UTC)
        with _mirror_transaction():
            state = WatchState.objects.filter(kind=kind).first()
            held = KubeObject.objects.filter(kind=kind).exists()
            baseline = not held and (state is None or state.last_sync_at is None)
            changed = state is None or state.state == SYNCED or bool(state.resource_version)
            if state is None:
                state = WatchState(kind=kind, state=STARTING, since=now)
            elif state.state == SYNCED:
                state.state, state.since = RELISTING, now
            state.resource_version = ""
            state.save()
            self._on_commit_rv(kind, "")
            if changed:
                _broadcast_derived(self.group, [WATCH_STATE_KIND])
        self._listing[kind] = _Listing(kind=kind, reason=reason, baseline=baseline)

    def write_page(self, kind: str, items: list[JSON]) -> int:
        """Write one page of the list begun with `begin_list` in its own transaction: the objects that
        differ from the rows held (all of them on a first list) and the rows derived from them. Returns
        the number of objects written."""
        listing = self._listing[kind]
        listing.received_at = time.time()
        uids = [_uid(item) for item in items]
        held: dict[str, str] = {}
        if not listing.baseline:
            for batch in chunks(u for u in uids if u):
                held.update(
                    KubeObject.objects.filter(kind=kind, uid__in=batch).values_list("uid", "resource_version")
                )
        pending: dict[str, JSON | None] = {}
        missing = 0
        for uid, item in zip(uids, items, strict=True):
            if not uid:
                continue
            before = held.get(uid)
            if before != str((item.get("metadata") or {}).get("resourceVersion", "")):
                pending[uid] = item
                missing += before is None
        if pending:
            self._write_listed(listing, pending)
        listing.seen.update(u for u in uids if u)
        listing.divergence.missing += missing
        listing.divergence.stale += len(pending) - missing
        return len(pending)

    def finish_list(self, kind: str, resource_version: str, *, health: Health | None = None) -> BatchResult:
        """Delete what the list did not see (ghosts), then record the list's resourceVersion (and
        `health`, "synced" for `mirror --once`) in the same transaction: only now is the kind current."""
        listing = self._listing[kind]
        ghosts: dict[str, JSON | None] = {
            uid: None
            for uid in KubeObject.objects.filter(kind=kind).values_list("uid", flat=True).iterator()
            if uid not in listing.seen
        }
        listing.divergence.ghosts = len(ghosts)
        received = listing.received_at or time.time()
        activity = _Activity(confirmed={kind: received})
        if listing.reason == RESYNC or listing.reason in RESET_REASONS:
            activity.divergences[kind] = (listing.reason, listing.divergence)

        def watch_state(now: datetime) -> list[str]:
            return self._write_watch_state(
                {kind: resource_version}, {kind: received}, {kind}, {kind: health} if health else {}, now,
                activity,
            )  # fmt: skip

        states_changed = self._write_listed(
            listing, ghosts, watch_state=watch_state, rvs={kind: resource_version}
        )
        del self._listing[kind]  # only now: a failed last transaction is retried with what was seen
        if listing.changes >= ANALYZE_AFTER:
            self._listed([kind])
        return BatchResult(
            changes=listing.first_changes,
            kinds=[kind] if listing.changes else [],
            resource_versions={kind: resource_version},
            states_changed=states_changed,
            total=listing.changes,
        )

    def apply_list_op(self, op: ListOp) -> None:
        """One step of a reflector's paged list. Safe to retry after a failed transaction: a begin
        already made, or a page or end for a list not begun (abandoned meanwhile), is skipped."""
        if isinstance(op, ListBegin):
            if op.kind not in self._listing:
                self.begin_list(op.kind, reason=op.reason)
        elif isinstance(op, ListPage):
            if op.kind in self._listing:
                self.write_page(op.kind, op.items)
        elif isinstance(op, ListEnd):
            if op.kind in self._listing:
                self.finish_list(op.kind, op.resource_version)
        else:
            self.abandon_list(op.kind)

    def abandon_list(self, kind: str) -> None:
        """The list failed part-way: forget it (the kind stays un-synced, without a resourceVersion)."""
        self._listing.pop(kind, None)

    def _write_listed(
        self,
        listing: _Listing,
        objs: dict[str, JSON | None],
        *,
        watch_state: Callable[[datetime], list[str]] | None = None,
        rvs: dict[str, str] | None = None,
    ) -> list[str]:
        kind = listing.kind
        if kind == "devicetaintrules" and objs:
            self._rules.clear()
        now = datetime.now(UTC)
        states_changed: list[str] = []
        try:
            with _mirror_transaction():
                by_kind = {kind: objs} if objs else {}
                old = self._old_state(by_kind)
                changes = self._write_objects(by_kind, old["names"], now)
                self._derive(by_kind, old, inline=False)
                if watch_state is not None:
                    states_changed = watch_state(now)
                if changes:
                    # A page applies no resourceVersion yet; the last transaction applies the list's.
                    broadcast(self.group, _message(BatchResult(changes, [kind], rvs or {})))
                    baseline = listing.baseline
                    transaction.on_commit(lambda: _announce(changes, baseline=baseline))
                elif states_changed:
                    _broadcast_derived(self.group, [WATCH_STATE_KIND])
        except Exception:
            self._rolled_back()
            raise
        listing.changes += len(changes)
        if _gc_paused and gc.get_count()[0] > BULK_GC_YOUNG:
            # The collector is paused for the list (`bulk_gc`), but cyclic garbage (ORM rows, querysets)
            # would pile up over a 100,000-device list: once that many objects are new since the last
            # collection, collect the young generations (the frozen and older objects are not walked).
            # Not after every page: a page's objects are freed by their counts (measured: a collection
            # after each page of a 10,000-device sync found nothing, 36 of them cost 0.2 s).
            gc.collect(1)
        room = MAX_CHANGES_PER_MESSAGE - len(listing.first_changes)
        if room > 0:
            listing.first_changes.extend(changes[:room])
        return states_changed

    def _rolled_back(self) -> None:
        """A batch's transaction failed: forget what it may have put in the caches kept across batches (the
        rules; the devices each pod reports the health of), which the rolled-back rows no longer say. The
        retry reads them again; kept, it would leave a deleted pod's health report on its devices."""
        self._rules.clear()
        self._reporting = None

    def _apply_batch(self, ops: Iterable[Op]) -> BatchResult:
        ops = list(ops)
        for kind in sorted({op.kind for op in ops if isinstance(op, Replace)}):
            self._gather_statistics(kind)
        if any(op.kind == "devicetaintrules" and not isinstance(op, HealthUpdate) for op in ops):
            self._rules.clear()
        try:
            with _mirror_transaction():
                result = self._apply(ops)
                if result.changes:
                    broadcast(self.group, _message(result))
                    changes = result.changes
                    transaction.on_commit(lambda: _announce(changes))
                elif result.states_changed:
                    _broadcast_derived(self.group, [WATCH_STATE_KIND])
        except Exception:
            self._rolled_back()
            raise
        relisted = [op.kind for op in ops if isinstance(op, Replace)]
        if relisted and len(result.changes) >= ANALYZE_AFTER:
            self._listed(relisted)
        return result

    def _apply(self, ops: list[Op]) -> BatchResult:
        now = datetime.now(UTC)
        pending: dict[tuple[str, str], JSON | None] = {}
        rvs: dict[str, str] = {}
        replaced: set[str] = set()
        received: dict[str, float] = {}
        health: dict[str, Health] = {}
        activity = _Activity()
        for op in ops:
            if isinstance(op, HealthUpdate):
                health[op.kind] = op.health
                continue
            received.setdefault(op.kind, op.received_at)
            activity.confirmed[op.kind] = max(activity.confirmed.get(op.kind, 0.0), op.received_at)
            rvs[op.kind] = op.resource_version
            if isinstance(op, Replace):
                replaced.add(op.kind)
                divergence = self._diff_replace(op, pending)
                if op.reason == RESYNC or op.reason in RESET_REASONS:
                    activity.divergences[op.kind] = (op.reason, divergence)
            elif op.type in ("ADDED", "MODIFIED"):
                pending[(op.kind, _uid(op.obj))] = op.obj
                activity.events[op.kind] = activity.events.get(op.kind, 0) + 1
            elif op.type == "DELETED":
                pending[(op.kind, _uid(op.obj))] = None
                activity.events[op.kind] = activity.events.get(op.kind, 0) + 1
            # BOOKMARK: only the resourceVersion moves.

        by_kind: dict[str, dict[str, JSON | None]] = defaultdict(dict)
        for (kind, uid), obj in pending.items():
            if uid:
                by_kind[kind][uid] = obj
        old = self._old_state(by_kind)
        changes = self._write_objects(by_kind, old["names"], now)
        self._derive(by_kind, old)
        states_changed = self._write_watch_state(rvs, received, replaced, health, now, activity)
        kinds = sorted({c["kind"] for c in changes})
        return BatchResult(changes=changes, kinds=kinds, resource_versions=rvs, states_changed=states_changed)

    def _diff_replace(self, op: Replace, pending: dict[tuple[str, str], JSON | None]) -> Divergence:
        current = dict(KubeObject.objects.filter(kind=op.kind).values_list("uid", "resource_version"))
        for (kind, uid), obj in pending.items():
            if kind == op.kind:
                if obj is None:
                    current.pop(uid, None)
                else:
                    current[uid] = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        listed = set()
        divergence = Divergence()
        for item in op.items:
            uid = _uid(item)
            listed.add(uid)
            if current.get(uid) != str((item.get("metadata") or {}).get("resourceVersion", "")):
                pending[(op.kind, uid)] = item
                if uid in current:
                    divergence.stale += 1
                else:
                    divergence.missing += 1
        for uid in set(current) - listed:
            pending[(op.kind, uid)] = None
            divergence.ghosts += 1
        return divergence

    def _old_state(self, by_kind: dict[str, dict[str, JSON | None]]) -> dict[str, Any]:
        """What the derived rows need to know about the objects before this batch."""
        names: dict[tuple[str, str], tuple[str, str]] = {}
        slice_pools: dict[str, str] = {}
        rule_selectors: list[JSON | None] = []
        rule_specs: dict[str, JSON] = {}
        node_labels: dict[str, tuple[str, JSON]] = {}
        if "nodes" in by_kind:
            # Only names and labels decide which nodes reach a pool; status updates change neither.
            for batch in chunks(by_kind["nodes"]):
                rows = KubeObject.objects.filter(kind="nodes", uid__in=batch).values_list(
                    "uid", "name", json_path("raw", "metadata", "labels")
                )
                node_labels.update({uid: (name, labels or {}) for uid, name, labels in rows})
        for kind, objs in by_kind.items():
            deleted = [uid for uid, obj in objs.items() if obj is None]
            fields = ["uid", "name", "namespace", "index_key"]
            if kind == "devicetaintrules":
                fields.append("raw")
            for batch in chunks(deleted if kind != "devicetaintrules" and kind != "resourceslices" else objs):
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
            "node_labels": node_labels,
            "had_nodes": "nodes" in by_kind and KubeObject.objects.filter(kind="nodes").exists(),
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
            for batch in chunks(deleted):
                KubeObject.objects.filter(kind=kind, uid__in=batch).delete()
            rows = [to_row(kind, obj, now) for obj in objs.values() if obj is not None]
            sql.upsert(KubeObject, rows, fields=OBJECT_FIELDS, conflict=["kind", "uid"])
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

    def _derive(
        self, by_kind: dict[str, dict[str, JSON | None]], old: dict[str, Any], *, inline: bool = True
    ) -> None:
        """`inline=False` (a list's pages): a page of slices writes its pools' availability with their
        device rows (`recompute_pools`; claims, classes, rules and nodes are listed before slices);
        every other recompute waits for `refresh_deferred`, so a pool reached by several pages of
        other kinds is computed once, after them."""
        if not any(
            k in by_kind
            for k in (
                "resourceslices",
                "devicetaintrules",
                "deviceclasses",
                "resourceclaims",
                "pods",
                "nodes",
            )
        ):
            return
        ctx = Context.load(self._matchers, self._rules, self._pool_memo)
        claims = by_kind.get("resourceclaims", {})
        claim_changes = replace_claims(claims) if claims else ClaimChanges(set(), set())
        claim_keys = claim_changes.devices

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
        # Fills taints, classes, allocations; on a list's pages availability too (the pools are whole
        # in hand; a batch of watch events recomputes it below, after its claims are in).
        rebuilt = recompute_pools(pool_keys, gone_slices, ctx, fresh=fresh, availability=not inline)
        if not inline:
            # What earlier pages asked for these pools (their claims, rules, nodes) is in what was just
            # computed: they need no recompute at the end of the list.
            self._availability_pools -= pool_keys

        availability = {
            "resourceslices": set(pool_keys) if inline else set(),
            # only where which claim holds which device changed (not a reservedFor or device status)
            "resourceclaims": {f"{d}/{p}" for d, p, _ in claim_changes.holdings},
        }
        if "devicetaintrules" in by_kind:
            # Only a rule whose spec changed moves taints: the eviction controller rewrites status
            # conditions every few seconds, and a rule may select thousands of devices.
            selectors = list(old["rule_selectors"])
            selectors += [
                (o.get("spec") or {}).get("deviceSelector")
                for uid, o in by_kind["devicetaintrules"].items()
                if o is not None and o.get("spec") != old["rule_specs"].get(uid)
            ]
            reached = pools_selected_by(selectors) - pool_keys if selectors else set()
            if reached:
                # Restart from the first device with the union: recomputing is idempotent, and a rule
                # that changes again mid-way must not leave devices computed from its old spec.
                # Pools rebuilt above already have every rule's taints (the initial list: all of
                # them), so only rules reaching other pools leave work for later.
                self._taint_selectors = [*self._taint_selectors, *selectors]
                self._taint_cursor = 0
                availability["devicetaintrules"] = reached
        if "deviceclasses" in by_kind:
            refresh_classes(ctx, skip=rebuilt)
            availability["deviceclasses"] = pools_reached_by(set(), all_pools=True)
        if claim_keys - rebuilt:
            refresh_allocations(claim_keys - rebuilt)
        if "pods" in by_kind:
            replace_pods(by_kind["pods"])
            refresh_health(by_kind["pods"], self._pod_reports())
        if "nodes" in by_kind:
            availability["nodes"] = self._pools_of_changed_nodes(by_kind["nodes"], old)
        self._queue_availability(availability, ctx, inline=inline)

    def _pools_of_changed_nodes(self, nodes: dict[str, JSON | None], old: dict[str, Any]) -> set[str]:
        changed: set[str] = set()
        for uid, obj in nodes.items():
            before = old["node_labels"].get(uid)
            meta = (obj or {}).get("metadata") or {}
            after = (str(meta.get("name", "")), meta.get("labels") or {}) if obj is not None else None
            if before != after:
                changed.update(x[0] for x in (before, after) if x is not None)
        flipped = old["had_nodes"] != KubeObject.objects.filter(kind="nodes").exists()
        return pools_reached_by(changed, all_pools=flipped) if changed or flipped else set()

    def _queue_availability(self, by_kind: dict[str, set[str]], ctx: Context, *, inline: bool = True) -> None:
        """Recompute the pools' availability in this batch when slices or claims changed a few of them;
        otherwise in chunks between batches (`refresh_deferred`): many pools, or a rule, class or node
        change, which may touch every pool (a rule's device taints are recomputed there too)."""
        now = by_kind.get("resourceslices", set()) | by_kind.get("resourceclaims", set())
        later = set().union(*(keys for kind, keys in by_kind.items() if kind not in INLINE_KINDS))
        if len(now) > AVAILABILITY_INLINE or not inline:
            later |= now
        elif now:
            recompute_availability(now, ctx)
        if later:
            self._availability_pools |= later
            self._availability_kinds |= {kind for kind, keys in by_kind.items() if keys}

    def _write_watch_state(
        self,
        rvs: dict[str, str],
        received: dict[str, float],
        replaced: set[str],
        health: dict[str, Health],
        now: datetime,
        activity: _Activity,
    ) -> list[str]:
        kinds = set(rvs) | set(health)
        if not kinds:
            return []
        changed: list[str] = []
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
                if state.state != h.state:
                    changed.append(kind)
                state.state = h.state
                state.error = h.error[:2000]
                state.relist_count = h.relists
                state.last_relist_reason = h.relist_reason[:64]
                if h.since is not None:
                    state.since = datetime.fromtimestamp(h.since, UTC)
                if h.confirmed_at is not None:
                    state.confirmed_at = _latest(state.confirmed_at, h.confirmed_at, now)
                if h.resource_version:
                    state.resource_version = h.resource_version
            if kind in activity.confirmed and state.state == "synced":
                # The data of this batch is the cluster's as of when it arrived.
                state.confirmed_at = _latest(state.confirmed_at, activity.confirmed[kind], now)
            state.events_applied += activity.events.get(kind, 0)
            if kind in activity.divergences:
                reason, divergence = activity.divergences[kind]
                state.divergences += divergence.total
                state.last_divergence = {"reason": reason, "missing": divergence.missing,
                                         "ghosts": divergence.ghosts, "stale": divergence.stale,
                                         "at": now.isoformat()}  # fmt: skip
                (log.warning if divergence.total else log.info)(
                    "%s %s: %d missing, %d ghosts, %d stale (repaired)",
                    kind, reason, divergence.missing, divergence.ghosts, divergence.stale,
                )  # fmt: skip
            state.object_count = counts.get(kind, 0)
            state.save()
            self._on_commit_rv(kind, state.resource_version)
        return changed


def _latest(held: datetime | None, confirmed: float, now: datetime) -> datetime:
    """The later of two confirmations, unless the one held is in the future: this host's clock stepped
    back since (NTP correcting a clock that ran ahead), and kept it would hide the data's age for as long."""
    at = datetime.fromtimestamp(confirmed, UTC)
    return max(at, held) if held is not None and held <= now else at


@dataclass
class _Activity:
    """Per kind in one batch: events applied, latest arrival, and a re-list's divergence."""

    events: dict[str, int] = field(default_factory=dict)
    confirmed: dict[str, float] = field(default_factory=dict)
    divergences: dict[str, tuple[str, Divergence]] = field(default_factory=dict)


NUL_REPLACEMENT = "\ufffd"


def _without_nul(value: Any) -> tuple[Any, bool]:
    """`value` with every NUL character of its strings (keys too) replaced by U+FFFD; True if any was."""
    if isinstance(value, str):
        return (value.replace("\x00", NUL_REPLACEMENT), True) if "\x00" in value else (value, False)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            new_key, key_changed = _without_nul(key)
            out[new_key], item_changed = _without_nul(item)
            changed = changed or key_changed or item_changed
        return (out, True) if changed else (value, False)
    if isinstance(value, list):
        pairs = [_without_nul(item) for item in value]
        return ([item for item, _ in pairs], True) if any(c for _, c in pairs) else (value, False)
    return value, False


def replace_nul(ops: Iterable[Op | ListOp]) -> bool:
    """Replace the NUL characters of the objects in `ops` (in place) by U+FFFD; True if there were any.

    Kubernetes takes any string in an annotation or a container's termination message, NUL included;
    PostgreSQL stores none (jsonb refuses `\\u0000`, text a NUL byte), so a batch holding one could never
    be written: the write loop calls this when a batch fails with a DataError, and writes the rest of the
    object (its resourceVersion included) with the NUL replaced, instead of retrying it for ever."""
    changed = False
    for op in ops:
        if isinstance(op, Event):
            op.obj, hit = _without_nul(op.obj)
            changed = changed or hit
        elif isinstance(op, Replace | ListPage):
            op.items, hit = _without_nul(op.items)
            changed = changed or hit
    return changed


def _announce(changes: list[JSON], *, baseline: bool = False) -> None:
    """`baseline`: the changes are (a page of) the first list of a kind the mirror never held — what
    was in the cluster, not what changed in it (the audit log records none of them as a change)."""
    try:
        mirror_batch_committed.send(sender=BatchWriter, changes=changes, baseline=baseline)
    except Exception:  # a receiver's bug must not stop the mirror
        log.exception("a mirror_batch_committed receiver failed")


@contextmanager
def _mirror_transaction() -> Iterator[None]:
    """One transaction of the mirror's writes. On PostgreSQL it commits without waiting for its WAL to
    reach the disk (`synchronous_commit = off`, this transaction only): the rows are a copy of the
    cluster's, each transaction holds its kind's resourceVersion with them, and a database crash loses at
    most the last moment of commits, whose events the next watch replays from the rv that survived. A
    list of 30,000 devices commits about 70 times; each wait for the disk took ~30 ms here."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit = off")
        yield


def _broadcast_derived(group: str, kinds: list[str]) -> None:
    """Rows derived from these kinds changed outside a batch (deferred work): pages showing them refresh."""
    broadcast(group, {"type": "inventory.changed", "kinds": kinds, "changes": [], "truncated": False,
                      "count": 0, "rv": {}})  # fmt: skip


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
