"""The list+watch loop for one kind, with client-go Reflector semantics. Pure: no Django.

    list (paginated) → sink.replace(items, rv), or page by page: begin_list, page…, end_list(rv)
    before every later watch: check (a one-item list at our rv) → the server has not been reset
    watch from rv with bookmarks → sink.apply(type, obj, rv) for every event, BOOKMARK included
    stream closed normally or silent too long → check, then watch again from the last rv (no re-list)
    410 Expired → re-list → sink.replace (the sink diffs by uid, so deletes and delete+recreate are seen)
    the API server's state was reset → re-list (see below)
    every `resync_seconds` → list at exactly our rv (page by page too) and let the sink repair (and count)
        any divergence
    any other error → back off (exponential, jittered) and try again from the last rv

Detecting a reset. After an etcd restore, or a cluster rebuilt under the same address, the server's history
is not the one our resourceVersion belongs to, and watching "from rv" silently misses everything. Three
signs say so, each answered with a fresh list (diffed by uid, deletes included):

- "Too large resource version": the server has not reached our rv. Upstream's reflector treats this answer
  to a list or watch as the signal to re-list from scratch; our check asks for it on purpose (a list with
  `resourceVersion=<ours>` is served only by a server whose history reaches it).
- A resourceVersion lower than ours in an event or bookmark. resourceVersions are opaque to clients in
  general, but dradash stores the list's rv and every event's, both from this one server, and kube-apiserver
  (etcd revisions) hands out increasing integers: an integer that goes backwards can only be another history.
  The comparison is made only when both are integers, so a server with other rv strings is never misread.
- A uid that changed under the same namespace/name without a DELETED first: within one consistent history
  a delete always comes between, so the object we hold is not the server's.

`Health` tells the sink how this kind stands: never "synced" until a list or check succeeded, "forbidden"
(403) and "unreachable" (no answer) apart from other errors, `since` when it last stopped (or started)
being synced, and `confirmed_at` when the data was last known to be current.

The list, check, watch and snapshot functions, the clock and the wait are injected, so tests drive it with
fakes.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from inventory.kube.client import KubeError, KubeTimeout

log = logging.getLogger(__name__)

JSON = dict[str, Any]
ListFn = Callable[[], tuple[list[JSON], str]]
# pages() → (items, list rv) one page at a time, as they arrive; raises KubeError (mid-way too).
PagesFn = Callable[[], Iterable[tuple[list[JSON], str]]]
# check(rv) → (at most one item, list rv): a list with resourceVersion=rv; raises KubeError.
CheckFn = Callable[[str], tuple[list[JSON], str]]
# snapshot(rv) → (items, rv): every object at exactly rv; raises KubeError (410 once rv is compacted).
SnapshotFn = Callable[[str], tuple[list[JSON], str]]
# snapshot_pages(rv) → the same, one page at a time (as PagesFn).
SnapshotPagesFn = Callable[[str], Iterable[tuple[list[JSON], str]]]
# watch(resource_version, timeout_seconds) → (type, object) events; raises KubeError / KubeTimeout.
WatchFn = Callable[[str, int], Iterable[tuple[str, JSON]]]
NameKey = tuple[str, str]  # (namespace, name)

STARTING = "starting"
SYNCED = "synced"
RELISTING = "relisting"
ERROR = "error"
FORBIDDEN = "forbidden"
UNREACHABLE = "unreachable"
STOPPED = "stopped"
SHORT_WATCH_SECONDS = 1.0

# Why a kind was (re-)listed: Replace.reason, WatchState.last_relist_reason, the relists metric's label.
INITIAL = "initial"
EXPIRED = "expired"
RESET_TOO_LARGE = "reset: too large resource version"
RESET_RV_BACKWARDS = "reset: resourceVersion went backwards"
RESET_UID_CHANGED = "reset: uid changed under the same name"
RESYNC = "resync"
RESET_REASONS = (RESET_TOO_LARGE, RESET_RV_BACKWARDS, RESET_UID_CHANGED)


@dataclass
class Health:
    kind: str
    state: str = STARTING
    resource_version: str = ""
    last_event_at: float | None = None  # wall-clock seconds
    error: str = ""
    relists: int = 0
    consecutive_errors: int = 0
    #: when the kind last became synced, or stopped being so (wall clock); None before the first report
    since: float | None = None
    #: when the data was last confirmed current: a list, an event or bookmark, a successful check (unless
    #: the watch before it delivered nothing)
    confirmed_at: float | None = None
    relist_reason: str = ""


class Sink(Protocol):
    def replace(self, kind: str, items: list[JSON], resource_version: str, reason: str) -> None: ...

    def apply(self, kind: str, event_type: str, obj: JSON, resource_version: str) -> None: ...

    def health(self, kind: str, health: Health) -> None: ...


class PagedSink(Sink, Protocol):
    """A sink that takes a list page by page (with `pages_fn`): begin, each page as it arrives, then the
    end with the list's rv — or abandon when the list failed part-way (the next list begins afresh)."""

    def begin_list(self, kind: str, reason: str) -> None: ...

    def page(self, kind: str, items: list[JSON]) -> None: ...

    def end_list(self, kind: str, resource_version: str, reason: str) -> None: ...

    def abandon_list(self, kind: str) -> None: ...


class _Reset(Exception):
    """The server's history is not ours (see the module docstring); carries the reason."""


@dataclass
class Backoff:
    """Exponential back-off with jitter, reset after a success (client-go: 800 ms → 30 s; here 15 s × up to 2)."""

    initial: float = 0.8
    # ≤ 30 s between tries even with full jitter: a returning API server is matched within about 30 s.
    maximum: float = 15.0
    factor: float = 2.0
    jitter: float = 1.0  # delay × (1 + jitter × U[0,1)) so reconnect storms spread out
    rng: random.Random = field(default_factory=random.Random)
    _current: float = 0.0

    def next(self) -> float:
        self._current = self.initial if self._current == 0 else min(self._current * self.factor, self.maximum)
        return self._current * (1 + self.jitter * self.rng.random())

    def reset(self) -> None:
        self._current = 0.0


def name_key(obj: JSON) -> NameKey:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def _uid(obj: JSON) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def went_backwards(new: str, old: str) -> bool:
    """True only when both are integers and `new` < `old` (see the module docstring for why we compare)."""
    if not (new.isdigit() and old.isdigit()):
        return False
    return int(new) < int(old)


def failure_state(exc: KubeError) -> str:
    if exc.is_forbidden:
        return FORBIDDEN
    if exc.is_unreachable or isinstance(exc, KubeTimeout):
        return UNREACHABLE
    return ERROR


class Reflector:
    def __init__(
        self,
        *,
        kind: str,
        list_fn: ListFn,
        watch_fn: WatchFn,
        sink: Sink,
        check_fn: CheckFn | None = None,
        snapshot_fn: SnapshotFn | None = None,
        stop: threading.Event | None = None,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        wait: Callable[[float], bool] | None = None,
        backoff: Backoff | None = None,
        watch_timeout_seconds: int = 300,
        resync_seconds: float = 0.0,
        rng: random.Random | None = None,
        resume_from: str = "",
        resume_names: dict[NameKey, str] | None = None,
        pages_fn: PagesFn | None = None,
        snapshot_pages_fn: SnapshotPagesFn | None = None,
    ) -> None:
        self.kind = kind
        self._list = list_fn
        # Lists (initial, expired, reset, resync) go to the sink page by page when it takes pages: memory
        # bounded by the page size.
        self._pages = pages_fn if pages_fn is not None and hasattr(sink, "begin_list") else None
        self._check = check_fn
        self._snapshot = snapshot_fn
        self._snapshot_pages = snapshot_pages_fn if self._pages is not None else None
        self._watch = watch_fn
        self._sink = sink
        self.stop_event = stop or threading.Event()
        self._now = wall_clock
        self._monotonic = monotonic
        # wait(seconds) → True when asked to stop; the default sleeps on the stop event.
        self._wait = wait or self.stop_event.wait
        self._backoff = backoff or Backoff()
        self._watch_timeout = watch_timeout_seconds
        self._resync_seconds = resync_seconds
        self._next_resync = monotonic() + resync_seconds if resync_seconds > 0 else None
        self._rng = rng or random.Random()
        self.health = Health(kind=kind)
        # resume_from: a resourceVersion the sink already holds (e.g. persisted with the data it
        # describes); the first watch starts there, after a check, instead of listing. A 410 still re-lists.
        self.resource_version = resume_from
        # The uid we hold under each namespace/name: a different one in an event means a reset.
        self._names: dict[NameKey, str] = dict(resume_names or {})
        # A watch right after a list needs no check; any later one does.
        self._must_check = bool(resume_from)
        # The last watch was refused (403) though lists are allowed: only a watch event says synced again.
        self._watch_forbidden = False
        # The last watch delivered nothing (closed at once, or silent until the inactivity timeout): the
        # check before the next one does not confirm the data (see `_check_server`).
        self._watch_silent = False

    # ------------------------------------------------------------------ public

    def run(self) -> None:
        """List (or check the stored rv), then watch until stopped."""
        try:
            while not self.stop_event.is_set():
                try:
                    if not self.resource_version and not self._list_until_done(INITIAL):
                        return
                    if self._next_resync is not None and self._monotonic() >= self._next_resync:
                        self._resync()
                        continue
                    self._watch_once()
                except Exception as exc:
                    # An answer nobody foresaw (a malformed object, a bug): this kind must not stop being
                    # mirrored for good. Say so, back off, and go on from the last rv, checked first.
                    log.exception("%s: unexpected failure; retrying", self.kind)
                    if self._fail(f"unexpected failure: {exc!r}", None):
                        return
        finally:
            self._set_health(STOPPED)

    def list_once(self) -> None:
        """One list + replace, raising on failure (for `mirror --once`)."""
        items, rv = self._list()
        self._replace(items, rv, INITIAL)

    def stop(self) -> None:
        self.stop_event.set()

    # ------------------------------------------------------------------ listing

    def _list_until_done(self, reason: str) -> bool:
        """List with back-off until it succeeds; False if stopped first."""
        while not self.stop_event.is_set():
            try:
                if self._pages is not None:
                    return self._list_paged(reason)
                items, rv = self._list()
            except KubeError as exc:
                if self._fail(f"list failed: {exc}", exc):
                    return False
                continue
            except Exception as exc:  # see `run`; listed again for the same reason
                log.exception("%s: unexpected failure while listing; retrying", self.kind)
                if self._fail(f"list failed: {exc!r}", None):
                    return False
                continue
            self._replace(items, rv, reason)
            return True
        return False

    def _list_paged(self, reason: str, pages: Iterable[tuple[list[JSON], str]] | None = None) -> bool:
        """One list (`pages`, else the newest state), page by page; False if stopped part-way (the sink
        forgets the pages' list). A KubeError, even mid-way, propagates."""
        assert self._pages is not None
        sink: PagedSink = self._sink  # type: ignore[assignment]
        sink.begin_list(self.kind, reason)
        if reason != RESYNC:
            # The sink holds no rv until the list's end (a resync's alone keeps it): no health report
            # meanwhile (an error, stopped) may give it back the old one over a part of a list.
            self.health.resource_version = ""
        names: dict[NameKey, str] = {}
        rv = ""
        try:
            for items, page_rv in pages if pages is not None else self._pages():
                if self.stop_event.is_set():
                    sink.abandon_list(self.kind)
                    return False
                rv = page_rv
                sink.page(self.kind, items)
                names.update((name_key(item), _uid(item)) for item in items)
        except BaseException:
            sink.abandon_list(self.kind)
            raise
        sink.end_list(self.kind, rv, reason)
        self._listed(names, rv, reason)
        return True

    def _relist(self, reason: str) -> None:
        if reason in RESET_REASONS:
            log.warning(
                "%s: the API server's state was reset (%s); re-listing (held rv %s)",
                self.kind,
                reason,
                self.resource_version,
            )
        else:
            log.info("%s: re-listing (%s)", self.kind, reason)
        self.health.relists += 1
        self.health.relist_reason = reason
        self._set_health(RELISTING)
        self._list_until_done(reason)

    def _replace(self, items: list[JSON], rv: str, reason: str) -> None:
        self._sink.replace(self.kind, items, rv, reason)
        self._listed({name_key(item): _uid(item) for item in items}, rv, reason)

    def _listed(self, names: dict[NameKey, str], rv: str, reason: str) -> None:
        self._names = names
        self.resource_version = rv
        self._must_check = False
        self._watch_forbidden = False
        self._watch_silent = False
        if reason != RESYNC and self._next_resync is not None:
            self._next_resync = self._monotonic() + self._resync_seconds
        self.health.resource_version = rv
        self.health.last_event_at = self._now()
        self._confirmed()

    def _resync(self) -> None:
        """List at exactly our rv so the sink, which holds the state at that rv, can compare and repair."""
        assert self._next_resync is not None
        self._next_resync = self._monotonic() + self._resync_seconds
        rv = self.resource_version
        try:
            if self._snapshot_pages is not None and rv:
                self._list_paged(RESYNC, self._snapshot_pages(rv))
                return
            if self._snapshot is not None and rv:
                items, _ = self._snapshot(rv)
                self._replace(items, rv, RESYNC)
                return
            items, list_rv = self._list()
        except KubeError as exc:
            if exc.is_too_large_resource_version:
                self._relist(RESET_TOO_LARGE)
            elif exc.is_gone:
                # Our rv left the server's history (a quiet kind); compare with the newest state instead.
                self._relist_for_resync()
            else:
                self._fail(f"resync list failed: {exc}", exc)
            return
        self._replace(items, list_rv, RESYNC)

    def _relist_for_resync(self) -> None:
        try:
            if self._pages is not None:
                self._list_paged(RESYNC)
                return
            items, list_rv = self._list()
        except KubeError as exc:
            self._fail(f"resync list failed: {exc}", exc)
            return
        self._replace(items, list_rv, RESYNC)

    # ------------------------------------------------------------------ watching

    def _check_server(self) -> bool:
        """Before watching again: is the server still the one our rv belongs to? False: handled (failed or
        re-listed); the loop goes round again."""
        if self._check is None or not self._must_check or not self.resource_version:
            return True
        try:
            items, list_rv = self._check(self.resource_version)
        except KubeError as exc:
            if exc.is_too_large_resource_version:
                self._relist(RESET_TOO_LARGE)
            elif exc.is_gone:
                self._relist(EXPIRED)
            else:
                self._fail(f"check failed: {exc}", exc)
            return False
        try:
            if went_backwards(list_rv, self.resource_version):
                raise _Reset(RESET_RV_BACKWARDS)
            for item in items:
                self._check_uid(item)
        except _Reset as reset:
            self._relist(str(reset))
            return False
        self._must_check = False
        if self._watch_silent:
            # The server still has our rv, but the last watch from it brought nothing: a proxy that cuts or
            # buffers the stream passes every check while no change ever arrives. Only an event or
            # bookmark confirms the data again; until then its age grows, and the pages say so.
            return True
        if self._watch_forbidden:
            self.health.confirmed_at = self._now()
        else:
            self._confirmed()
        return True

    def _watch_once(self) -> None:
        if not self._check_server():
            return
        # Spread the server-side timeouts (5–10 min) so all kinds do not reconnect at once.
        timeout = int(self._watch_timeout * (1 + self._rng.random()))
        if self._next_resync is not None:
            timeout = max(1, min(timeout, int(self._next_resync - self._monotonic()) + 1))
        started = self._monotonic()
        events = 0
        self._must_check = True
        try:
            for event_type, obj in self._watch(self.resource_version, timeout):
                if self.stop_event.is_set():
                    return
                events += 1
                self._handle(event_type, obj)
                if self._next_resync is not None and self._monotonic() >= self._next_resync:
                    return  # everything up to our rv is with the sink: resync now
        except _Reset as reset:
            self._relist(str(reset))
            return
        except KubeTimeout:
            # Silence longer than the inactivity timeout: a half-open connection (NAT, load balancer)
            # looks exactly like a quiet cluster, so drop it and watch again from the last rv.
            log.info("watch %s: inactive, reconnecting from %s", self.kind, self.resource_version)
            self._watch_silent = events == 0
            return
        except KubeError as exc:
            if exc.is_too_large_resource_version:
                self._relist(RESET_TOO_LARGE)
            elif exc.is_gone:
                # Our rv fell out of the server's history: only a fresh list can tell what changed.
                log.info("watch %s: %s; re-listing", self.kind, exc)
                self._relist(EXPIRED)
            else:
                self._watch_forbidden = exc.is_forbidden
                self._fail(f"watch failed: {exc}", exc)
            return
        # A normal close (server timeout, apiserver restart): check, then resume from the last rv.
        if self.stop_event.is_set():
            return
        self._watch_silent = events == 0 and self._monotonic() - started < SHORT_WATCH_SECONDS
        if self._watch_silent:
            # Closed at once with nothing in it (a proxy cutting streams, a server shedding load):
            # reconnecting immediately would hammer it, so wait as after an error.
            log.info("watch %s: closed immediately; backing off", self.kind)
            self._wait(self._backoff.next())
            return
        self._backoff.reset()

    def _handle(self, event_type: str, obj: JSON) -> None:
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if event_type not in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"):
            log.warning("watch %s: ignoring event of unknown type %r", self.kind, event_type)
            return
        if rv and went_backwards(rv, self.resource_version):
            raise _Reset(RESET_RV_BACKWARDS)
        if event_type in ("ADDED", "MODIFIED"):
            self._check_uid(obj)
            self._names[name_key(obj)] = _uid(obj)
        elif event_type == "DELETED":
            key = name_key(obj)
            if self._names.get(key) == _uid(obj):
                del self._names[key]
        self._sink.apply(self.kind, event_type, obj, rv or self.resource_version)
        if rv:
            self.resource_version = rv
            self.health.resource_version = rv
        self.health.last_event_at = self._now()
        if self.health.state != SYNCED:
            self._watch_forbidden = False
            self._confirmed()
        else:
            self.health.confirmed_at = self.health.last_event_at

    def _check_uid(self, obj: JSON) -> None:
        uid = _uid(obj)
        held = self._names.get(name_key(obj))
        if uid and held and held != uid:
            raise _Reset(RESET_UID_CHANGED)

    # ------------------------------------------------------------------ health

    def _confirmed(self) -> None:
        """The data is current as of now: synced, errors forgotten."""
        self.health.confirmed_at = self._now()
        self.health.error = ""
        self.health.consecutive_errors = 0
        self._backoff.reset()
        self._set_health(SYNCED)

    def _fail(self, message: str, exc: KubeError | None) -> bool:
        """Record an error and back off; True if asked to stop while waiting."""
        log.warning("%s %s", self.kind, message)
        self.health.error = message
        self.health.consecutive_errors += 1
        self._must_check = True
        self._set_health(failure_state(exc) if exc is not None else ERROR)
        return self._wait(self._backoff.next())

    def _set_health(self, state: str) -> None:
        was_synced = self.health.state == SYNCED
        if self.health.since is None or was_synced != (state == SYNCED):
            self.health.since = self._now()
        self.health.state = state
        try:
            self._sink.health(self.kind, self.health)
        except Exception:  # health reporting must never kill the watch
            log.exception("health callback for %s failed", self.kind)
