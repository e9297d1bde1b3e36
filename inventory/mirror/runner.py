"""The mirror's threads: one `Reflector` per kind feeding a queue, and one writer thread that drains it in
batches through `BatchWriter` (see `inventory.mirror.writer`), with retries when the database goes away.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from django.conf import settings
from django.db import DataError, connection
from django.utils import timezone

from inventory.kube import KIND, KubeClient, KubeError, connect
from inventory.mirror.reflector import INITIAL, SYNCED, Health, NameKey, Reflector
from inventory.mirror.writer import (
    LIST_OPS,
    MAX_CHANGES_PER_MESSAGE,
    BatchResult,
    BatchWriter,
    Event,
    HealthUpdate,
    ListAbandon,
    ListBegin,
    ListEnd,
    ListOp,
    ListPage,
    Op,
    Replace,
    bulk_gc,
    replace_nul,
)
from inventory.models import (
    NOT_SERVED,
    WATCH_ERROR,
    WATCH_FORBIDDEN,
    WATCH_STOPPED,
    KubeObject,
    WatchState,
)

log = logging.getLogger(__name__)

JSON = dict[str, Any]
DEFAULT_KINDS = list(KIND)
T = TypeVar("T")
# Listed first by `sync_once`: what the devices' derived columns (taints, classes, nodes' pools,
# allocations) read. Claims before slices: each device row is then written with its allocations,
# instead of written and then updated again by the claims' pages (4,000 UPDATEs at 10,000 devices).
LIST_FIRST = ("deviceclasses", "devicetaintrules", "nodes", "resourceclaims")


QueueOp = Op | ListOp
PAGES_IN_FLIGHT = 4  # list pages the reflectors together may queue ahead of the writer
READ_AHEAD = 2  # list pages `sync_once` fetches ahead of the page it writes
#: Seconds the writer waits for more events when one arrives within this long of the last batch (a burst):
#: bigger batches cost less per event, and lag grows by at most this much while the events keep coming.
BATCH_LINGER = 0.1
# Kinds no derived availability reads: `sync_once` lists them last, their first pages fetched (up to
# AHEAD_OF_AVAILABILITY) while the availability of every pool is computed (the slices' pages).
LIST_AFTER_AVAILABILITY = ("pods",)
AHEAD_OF_AVAILABILITY = 16


_FINISHED = object()


class ReadAhead(Iterator[T]):
    """`pages`, iterated in a thread (started now, not at the first `next`) up to `depth` items ahead of
    the caller: the API server produces (and the client decodes) the next pages while the caller writes
    this one — or does other work first — and the caller's database waits overlap the server's work
    instead of adding to it. An exception of `pages` is raised by `next`, in order. `close()`, the end of
    the pages, an exception, or dropping the iterator stops the thread at its next page (the thread holds
    only the queue and the event, never this object)."""

    def __init__(self, pages: Iterable[T], depth: int = READ_AHEAD) -> None:
        self._ahead: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
        self._done = threading.Event()
        thread = threading.Thread(
            target=_fetch_ahead, args=(pages, self._ahead, self._done), name="list-read-ahead", daemon=True
        )
        thread.start()

    def __next__(self) -> T:
        if self._done.is_set():
            raise StopIteration
        ok, item = self._ahead.get()
        if not ok:
            self.close()
            raise item
        if item is _FINISHED:
            self.close()
            raise StopIteration
        return item  # type: ignore[no-any-return]

    def close(self) -> None:
        self._done.set()

    def __del__(self) -> None:
        self._done.set()


def _fetch_ahead(pages: Iterable[Any], ahead: queue.Queue[tuple[bool, Any]], done: threading.Event) -> None:
    def hand(entry: tuple[bool, Any]) -> bool:
        """Queue `entry` for the caller; False once the caller has stopped."""
        while not done.is_set():
            try:
                ahead.put(entry, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    try:
        for page in pages:
            if not hand((True, page)):
                return
        hand((True, _FINISHED))
    except BaseException as exc:  # handed to the caller, raised there
        hand((False, exc))


class QueueSink:
    """The reflectors' sink: everything goes through one queue to the single writer. Lists go page by
    page, at most PAGES_IN_FLIGHT ahead of the writer, so a list of 100,000 devices never sits in memory."""

    def __init__(self, q: queue.Queue[QueueOp], *, stop: threading.Event | None = None) -> None:
        self.q = q
        self.slots = threading.Semaphore(PAGES_IN_FLIGHT)
        self.stop = stop or threading.Event()

    def begin_list(self, kind: str, reason: str) -> None:
        self.q.put(ListBegin(kind, reason))

    def page(self, kind: str, items: list[JSON]) -> None:
        acquired = False
        while not (acquired := self.slots.acquire(timeout=0.5)) and not self.stop.is_set():
            pass
        self.q.put(ListPage(kind, items, slot=self.slots if acquired else None))

    def end_list(self, kind: str, resource_version: str, reason: str) -> None:
        self.q.put(ListEnd(kind, resource_version, reason))

    def abandon_list(self, kind: str) -> None:
        self.q.put(ListAbandon(kind))

    def replace(self, kind: str, items: list[JSON], resource_version: str, reason: str = INITIAL) -> None:
        self.q.put(Replace(kind, items, resource_version, reason=reason))

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


def _not_served(kind: str) -> Health:
    return Health(kind=kind, state=WATCH_STOPPED, error=NOT_SERVED)


@dataclass
class MirrorHandle:
    """A running mirror: reflector threads + the writer thread."""

    stop_event: threading.Event
    threads: list[threading.Thread]
    reflectors: list[Reflector]
    writer: threading.Thread
    queue: queue.Queue[QueueOp]
    batch_writer: BatchWriter | None = None
    applied_batches: int = 0
    applied_ops: int = 0
    last_error: str = ""
    #: the database lost commits (`BatchWriter.lost_commits`): nothing more is written, the mirror stops
    lost_commits: list[str] = field(default_factory=list)
    #: a write failed since the database was last found to hold every commit: look before the next batch
    write_failed: bool = False

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        for reflector in self.reflectors:
            reflector.stop()
        self.writer.join(timeout)

    def is_alive(self) -> bool:
        return self.writer.is_alive()

    def caught_up(self) -> bool:
        """Every queued event applied and no derived work (taints, availability) left for later."""
        return self.queue.unfinished_tasks == 0 and not (self.batch_writer and self.batch_writer.has_deferred)


class Mirror:
    def __init__(
        self,
        client: KubeClient,
        *,
        kinds: list[str] | None = None,
        batch_max: int = 5000,
        batch_linger: float = BATCH_LINGER,
        watch_timeout_seconds: int = 300,
        inactivity_timeout: float = 120.0,
        page_size: int = 500,
        resync_seconds: float | None = None,
        may_write: Callable[[], bool] | None = None,
        heartbeat_seconds: float | None = None,
        heartbeat_timeout: float | None = None,
    ) -> None:
        self.client = client
        self.kinds = kinds or DEFAULT_KINDS
        self.batch_max = batch_max
        self.batch_linger = batch_linger
        self.watch_timeout_seconds = watch_timeout_seconds
        self.inactivity_timeout = inactivity_timeout
        self.page_size = page_size
        self.resync_seconds = float(
            settings.DRADASH_MIRROR_RESYNC_SECONDS if resync_seconds is None else resync_seconds
        )
        self.heartbeat_seconds = float(
            settings.DRADASH_MIRROR_HEARTBEAT_SECONDS if heartbeat_seconds is None else heartbeat_seconds
        )
        self.heartbeat_timeout = float(
            settings.DRADASH_MIRROR_HEARTBEAT_TIMEOUT_SECONDS
            if heartbeat_timeout is None
            else heartbeat_timeout
        )
        self.writer = BatchWriter()
        # The leader election's fence: a batch is written only while this returns True.
        self.may_write = may_write

    def _list_fn(self, kind: str) -> Callable[[], tuple[list[JSON], str]]:
        return lambda: self.client.list_all(kind, page_size=self.page_size)

    def _pages_fn(self, kind: str) -> Callable[[], Iterable[tuple[list[JSON], str]]]:
        return lambda: self.client.list_pages(kind, page_size=self.page_size)

    def _check_fn(self, kind: str) -> Callable[[str], tuple[list[JSON], str]]:
        def check(rv: str) -> tuple[list[JSON], str]:
            # One item at "not older than rv": a server whose history does not reach rv says "too large".
            items, list_rv, _ = self.client.list_objects(kind, limit=1, resource_version=rv)
            return items, list_rv

        return check

    def _snapshot_fn(self, kind: str) -> Callable[[str], tuple[list[JSON], str]]:
        return lambda rv: self.client.list_all(
            kind, page_size=self.page_size, resource_version=rv, exact=True
        )

    def _snapshot_pages_fn(self, kind: str) -> Callable[[str], Iterable[tuple[list[JSON], str]]]:
        return lambda rv: self.client.list_pages(
            kind, page_size=self.page_size, resource_version=rv, exact=True
        )

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
        """List every served kind and write each page as it arrives (`mirror --once`).

        One transaction per page, not one for everything: memory stays bounded by the page size (a
        whole 100,000-device list decoded and encoded at once took 1.5 GB), and SQLite's write lock is
        never held for minutes. A kind is "synced" only once its last page is written and the objects the
        list did not see are deleted (`BatchWriter.begin_list`). Rules, classes and nodes are listed first,
        so the devices' taints, classes and availability are derived once, from them; claims before
        slices, so are the devices' allocations."""
        served, missing = served_kinds(self.client, self.kinds)
        record_cluster_info(self.client, missing)
        served.sort(key=lambda kind: LIST_FIRST.index(kind) if kind in LIST_FIRST else len(LIST_FIRST))
        before = [kind for kind in served if kind not in LIST_AFTER_AVAILABILITY]
        after = [kind for kind in served if kind in LIST_AFTER_AVAILABILITY]
        results: list[BatchResult] = []
        pages: dict[str, ReadAhead[tuple[list[JSON], str]]] = {}
        try:
            with bulk_gc():  # the pages are decoded here: the collector waits for the whole load
                for kind in missing:  # the server holds none of its objects: neither does the database
                    self.writer.begin_list(kind, reason=INITIAL)
                    results.append(self.writer.finish_list(kind, "", health=_not_served(kind)))
                for kind in before:
                    if kind == "resourceslices":
                        # Its pages run the allocator per pool (availability with the device rows): the
                        # first pages of the kinds no availability reads (pods) are fetched meanwhile.
                        pages = self._read_ahead_of_availability(after)
                    results.append(self._list_into_database(kind, ReadAhead(self._pages_fn(kind)())))
            # What availability is left (rules, classes or nodes whose pages asked for pools) once the kinds
            # it reads are in, while the pods' first pages are fetched, if the slices' list did not start
            # them. With the collector running again (`bulk_gc` froze what the lists left): the
            # allocator's objects hold cycles, and 200 chunks of them at 100,000 devices, uncollected,
            # were hundreds of MB.
            pages = pages or self._read_ahead_of_availability(after)
            while self.writer.refresh_deferred(chunk=1_000_000):
                pass
        except BaseException:
            for ahead in pages.values():
                ahead.close()
            raise
        with bulk_gc():
            for kind in after:
                results.append(
                    self._list_into_database(kind, pages.pop(kind, None) or ReadAhead(self._pages_fn(kind)()))
                )
        while self.writer.refresh_deferred(chunk=1_000_000):  # anything the later kinds changed
            pass
        self.writer.vacuum_listed()  # every kind is current: now the tables' upkeep
        return BatchResult(
            changes=[c for r in results for c in r.changes][:MAX_CHANGES_PER_MESSAGE],
            kinds=sorted({k for r in results for k in r.kinds}),
            resource_versions={k: v for r in results for k, v in r.resource_versions.items()},
            states_changed=[k for r in results for k in r.states_changed],
            total=sum(r.count for r in results),
        )

    def _read_ahead_of_availability(self, kinds: list[str]) -> dict[str, ReadAhead[tuple[list[JSON], str]]]:
        return {kind: ReadAhead(self._pages_fn(kind)(), depth=AHEAD_OF_AVAILABILITY) for kind in kinds[:1]}

    def _list_into_database(self, kind: str, pages: Iterator[tuple[list[JSON], str]]) -> BatchResult:
        """One kind's list for `sync_once`, page by page, ending "synced" at the list's rv."""
        self.writer.begin_list(kind, reason=INITIAL)
        rv = ""
        try:
            for items, page_rv in pages:
                rv = page_rv
                self.writer.write_page(kind, items)
        except BaseException:
            self.writer.abandon_list(kind)
            raise
        now = time.time()
        health = Health(kind=kind, state=SYNCED, resource_version=rv, since=now, confirmed_at=now)
        return self.writer.finish_list(kind, rv, health=health)

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
        resume_names: dict[str, dict[NameKey, str]] = {kind: {} for kind in resume_from}
        for kind, namespace, name, uid in KubeObject.objects.filter(kind__in=list(resume_from)).values_list(
            "kind", "namespace", "name", "uid"
        ):
            resume_names[kind][(namespace, name)] = uid
        q: queue.Queue[QueueOp] = queue.Queue()
        sink = QueueSink(q, stop=stop)
        try:
            served, missing = served_kinds(self.client, self.kinds)
            record_cluster_info(self.client, missing)
        except KubeError as exc:
            log.warning("discovery failed (%s); watching every kind", exc)
            served, missing = list(self.kinds), []
        for kind in missing:  # the server holds none of its objects: neither does the database
            q.put(ListBegin(kind, INITIAL))
            q.put(ListEnd(kind, "", INITIAL))
            q.put(HealthUpdate(kind, _not_served(kind)))
        reflectors = [
            Reflector(
                kind=kind,
                list_fn=self._list_fn(kind),
                check_fn=self._check_fn(kind),
                snapshot_fn=self._snapshot_fn(kind),
                watch_fn=self._watch_fn(kind),
                sink=sink,
                stop=stop,
                watch_timeout_seconds=self.watch_timeout_seconds,
                resync_seconds=self.resync_seconds,
                resume_from=resume_from.get(kind, ""),
                resume_names=resume_names.get(kind),
                pages_fn=self._pages_fn(kind),
                snapshot_pages_fn=self._snapshot_pages_fn(kind),
            )
            for kind in served
        ]
        threads = [
            threading.Thread(target=r.run, name=f"reflector-{r.kind}", daemon=True) for r in reflectors
        ]
        handle = MirrorHandle(
            stop_event=stop,
            threads=threads,
            reflectors=reflectors,
            writer=threading.Thread(),
            queue=q,
            batch_writer=self.writer,
        )
        handle.writer = threading.Thread(
            target=self._write_loop, args=(handle,), name="mirror-writer", daemon=True
        )
        handle.writer.start()
        for thread in threads:
            thread.start()
        if self.heartbeat_seconds > 0:
            threading.Thread(
                target=self._heartbeat, args=(stop,), name="mirror-heartbeat", daemon=True
            ).start()
        return handle

    def _heartbeat(self, stop: threading.Event) -> None:
        """Ask the API server for /version every `heartbeat_seconds`. No answer (refused, cut, or nothing
        within `heartbeat_timeout`): end every watch stream at once, so that each kind turns "unreachable"
        now and the pages say the cluster does not answer, instead of after the watches' two-minute
        inactivity timeout (a hung server, or a network path that drops packets, keeps a stream open and
        silent). The reflectors then check and watch again as after any error, and come back "synced" when
        the server answers."""
        while not stop.wait(self.heartbeat_seconds):
            try:
                self.client.server_version(timeout=self.heartbeat_timeout)
            except KubeError as exc:
                if not exc.is_unreachable:
                    continue  # it answered: an error status is the reflectors' to meet, each for its kind
                reason = (
                    f"the API server did not answer GET /version within {self.heartbeat_timeout:g}s"
                    if exc.reason == "Timeout"
                    else f"the API server cannot be reached: {exc}"
                )
                ended = self.client.interrupt_watches(reason)
                if ended:
                    log.warning("heartbeat: %s; ended %d watch streams", reason, ended)
            except Exception:  # the heartbeat must never stop for good
                log.exception("mirror heartbeat failed")

    def _write_loop(self, handle: MirrorHandle) -> None:
        carry: QueueOp | None = None  # a list op met while draining: it goes alone, next
        last_batch_end = float("-inf")
        try:
            while True:
                if carry is not None:
                    first, carry = carry, None
                else:
                    try:
                        # With a taint recompute pending, take queued events first, else do one chunk of it.
                        first = (
                            handle.queue.get_nowait()
                            if self.writer.has_deferred
                            else handle.queue.get(timeout=0.5)
                        )
                    except queue.Empty:
                        if self.writer.has_deferred:
                            self._idle_work(
                                handle,
                                self.writer.refresh_deferred,
                                "recomputing deferred taints and availability",
                            )
                            continue
                        if handle.stop_event.is_set():
                            break
                        if self.writer.has_vacuum_listed:
                            self._idle_work(handle, self.writer.vacuum_listed, "vacuuming the listed tables")
                        continue
                if isinstance(first, LIST_OPS):
                    self._apply_with_retry(handle, [first])
                    continue
                ops: list[QueueOp] = [first]
                # Drain what is already queued: one transaction and one broadcast for a burst. In a
                # burst (this event came within `batch_linger` of the last batch's end) wait that long
                # for more: a batch's fixed cost is shared, and a claim's or pod's several changes in
                # the window are written once. An event after a quiet spell is written at once.
                linger_until = (
                    time.monotonic() + self.batch_linger
                    if time.monotonic() - last_batch_end < self.batch_linger
                    else None
                )
                while len(ops) < self.batch_max:
                    try:
                        op = handle.queue.get_nowait()
                    except queue.Empty:
                        wait = linger_until - time.monotonic() if linger_until is not None else 0.0
                        if wait <= 0 or handle.stop_event.is_set():
                            break
                        try:
                            op = handle.queue.get(timeout=wait)
                        except queue.Empty:
                            break
                    if isinstance(op, LIST_OPS):
                        carry = op
                        break
                    ops.append(op)
                self._apply_with_retry(handle, ops)
                last_batch_end = time.monotonic()
        finally:
            if carry is not None:
                self._done(handle, [carry])
            if self.may_write is None or self.may_write():
                self._mark_stopped()
            connection.close()

    @staticmethod
    def _done(handle: MirrorHandle, ops: list[QueueOp]) -> None:
        for op in ops:
            if isinstance(op, ListPage) and op.slot is not None:
                op.slot.release()
                op.slot = None
            handle.queue.task_done()

    def _apply_ops(self, ops: list[QueueOp]) -> None:
        if len(ops) == 1 and isinstance(ops[0], LIST_OPS):
            self.writer.apply_list_op(ops[0])
        else:
            self.writer.apply([op for op in ops if not isinstance(op, LIST_OPS)], defer=True)

    def _apply_with_retry(self, handle: MirrorHandle, ops: list[QueueOp]) -> None:
        delay = 0.5
        while True:
            if handle.lost_commits:
                self._done(handle, ops)  # written on top of a database that lost events, they would hide it
                return
            if self.may_write is not None and not self.may_write():
                # No longer (surely) the leader: another replica may be writing. Drop the batch; the
                # next leader resumes from the resourceVersions stored with the data it finds.
                log.warning("mirror: not the leader any more; dropping %d ops and stopping", len(ops))
                handle.stop_event.set()
                self._done(handle, ops)
                return
            # One connection for the writer's life (not close_old_connections(): with CONN_MAX_AGE=0 it
            # reconnects for every batch, ~40 ms on PostgreSQL); a broken one fails the batch, is closed
            # below and replaced on the retry.
            try:
                if handle.write_failed and (lost := self.writer.lost_commits()):
                    # The database came back without commits it had acknowledged: the events in them are
                    # lost, and the reflectors went on past them. Stop: the mirror started again resumes
                    # from the resourceVersions the database holds, and the watch replays them.
                    log.error("mirror: the database lost committed batches of %s; stopping", ", ".join(lost))
                    handle.lost_commits = lost
                    handle.stop_event.set()
                    self._done(handle, ops)
                    return
                handle.write_failed = False
                self._apply_ops(ops)
                self._done(handle, ops)
                handle.applied_batches += 1
                handle.applied_ops += len(ops)
                return
            except Exception as exc:  # the database went away: keep the batch and retry, do not lose events
                if isinstance(exc, DataError) and replace_nul(ops):
                    # A NUL PostgreSQL cannot store: that batch would fail for ever. Write it without.
                    log.warning("mirror: a batch held NUL characters (%s); writing them as U+FFFD", exc)
                    continue
                handle.write_failed = True
                handle.last_error = str(exc)
                log.exception("mirror: applying %d ops failed; retrying in %.1fs", len(ops), delay)
                connection.close()
                if handle.stop_event.wait(delay):
                    self._done(handle, ops)
                    return
                delay = min(delay * 2, 30.0)

    @staticmethod
    def _idle_work(handle: MirrorHandle, work: Callable[[], object], what: str) -> None:
        """Work the writer does between batches (a chunk of deferred recomputes, a VACUUM). If the database
        went away, what was to do stays to do: it is tried again shortly."""
        try:
            work()
        except Exception as exc:
            handle.write_failed = True
            handle.last_error = str(exc)
            log.exception("mirror: %s failed; retrying", what)
            connection.close()
            handle.stop_event.wait(0.5)

    def _mark_stopped(self) -> None:
        try:
            # An error or a refusal stays visible: it is still true of these credentials and this server.
            WatchState.objects.filter(state=SYNCED).update(state=WATCH_STOPPED, since=timezone.now())
            WatchState.objects.exclude(state__in=(WATCH_ERROR, WATCH_FORBIDDEN)).update(state=WATCH_STOPPED)
        except Exception:
            log.debug("could not mark watches stopped", exc_info=True)


class ElectedMirror:
    """A mirror that runs only while `elector` holds the Lease: started (resuming from the stored
    resourceVersions) when this replica becomes the leader, stopped when it stops being one."""

    def __init__(self, client: KubeClient, elector: Any, **mirror_options: Any) -> None:
        self.client = client
        self.elector = elector
        self.mirror_options = mirror_options
        self.handle: MirrorHandle | None = None
        self.became_leader_at: float | None = None

    def _started(self) -> None:
        self.became_leader_at = time.monotonic()
        mirror = Mirror(self.client, may_write=self.elector.may_write, **self.mirror_options)
        self.handle = mirror.start(threading.Event(), resume=True)

    def _stopped(self) -> None:
        handle, self.handle = self.handle, None
        if handle is not None:
            handle.stop(timeout=15)

    def run(self, stop: threading.Event, *, release_on_stop: bool = True) -> None:
        self.elector.run(
            stop=stop,
            on_started_leading=self._started,
            on_stopped_leading=self._stopped,
            release_on_stop=release_on_stop,
        )

    @property
    def role(self) -> str:
        return str(self.elector.role)


def start_mirror_thread(kubeconfig: str | None, context: str | None = None, **options: Any) -> MirrorHandle:
    """Run the mirror inside this process (the demo): returns a handle with `.stop()`."""
    client = connect(kubeconfig or None, context or None)
    return Mirror(client, **options).start()


def wait_for_sync(handle: MirrorHandle, *, timeout: float = 30.0) -> bool:
    """True once every reflector has listed (or been refused: forbidden is the cluster's final answer) and
    the writer has caught up (`MirrorHandle.caught_up`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        settled = all(r.health.state in (SYNCED, WATCH_FORBIDDEN) for r in handle.reflectors)
        if settled and handle.caught_up():
            return True
        if not handle.is_alive():
            return False
        time.sleep(0.05)
    return False
