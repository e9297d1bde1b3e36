"""The list+watch loop for one kind, with client-go Reflector semantics. Pure: no Django.

    list (paginated) → sink.replace(items, rv)
    watch from rv with bookmarks → sink.apply(type, obj, rv) for every event, BOOKMARK included
    stream closed normally or silent too long → watch again from the last rv (no re-list)
    410 Expired → re-list → sink.replace (the sink diffs by uid, so deletes and delete+recreate are seen)
    any other error → back off (exponential, jittered) and watch again from the last rv

The list and watch functions, the clock and the wait are injected, so tests drive it with fakes.
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
# watch(resource_version, timeout_seconds) → (type, object) events; raises KubeError / KubeTimeout.
WatchFn = Callable[[str, int], Iterable[tuple[str, JSON]]]

STARTING = "starting"
SYNCED = "synced"
RELISTING = "relisting"
ERROR = "error"
STOPPED = "stopped"
SHORT_WATCH_SECONDS = 1.0


@dataclass
class Health:
    kind: str
    state: str = STARTING
    resource_version: str = ""
    last_event_at: float | None = None  # wall-clock seconds
    error: str = ""
    relists: int = 0
    consecutive_errors: int = 0


class Sink(Protocol):
    def replace(self, kind: str, items: list[JSON], resource_version: str) -> None: ...

    def apply(self, kind: str, event_type: str, obj: JSON, resource_version: str) -> None: ...

    def health(self, kind: str, health: Health) -> None: ...


@dataclass
class Backoff:
    """Exponential back-off with jitter, reset after a success (client-go: 800 ms → 30 s)."""

    initial: float = 0.8
    maximum: float = 30.0
    factor: float = 2.0
    jitter: float = 1.0  # delay × (1 + jitter × U[0,1)) so reconnect storms spread out
    rng: random.Random = field(default_factory=random.Random)
    _current: float = 0.0

    def next(self) -> float:
        self._current = self.initial if self._current == 0 else min(self._current * self.factor, self.maximum)
        return self._current * (1 + self.jitter * self.rng.random())

    def reset(self) -> None:
        self._current = 0.0


class Reflector:
    def __init__(
        self,
        *,
        kind: str,
        list_fn: ListFn,
        watch_fn: WatchFn,
        sink: Sink,
        stop: threading.Event | None = None,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        wait: Callable[[float], bool] | None = None,
        backoff: Backoff | None = None,
        watch_timeout_seconds: int = 300,
        rng: random.Random | None = None,
        resume_from: str = "",
    ) -> None:
        self.kind = kind
        self._list = list_fn
        self._watch = watch_fn
        self._sink = sink
        self.stop_event = stop or threading.Event()
        self._now = wall_clock
        self._monotonic = monotonic
        # wait(seconds) → True when asked to stop; the default sleeps on the stop event.
        self._wait = wait or self.stop_event.wait
        self._backoff = backoff or Backoff()
        self._watch_timeout = watch_timeout_seconds
        self._rng = rng or random.Random()
        self.health = Health(kind=kind)
        # resume_from: a resourceVersion the sink already holds (e.g. persisted with the data it
        # describes); the first watch starts there instead of listing. A 410 still re-lists.
        self.resource_version = resume_from

    # ------------------------------------------------------------------ public

    def run(self) -> None:
        """List, then watch until stopped."""
        try:
            if self.resource_version:
                self.health.resource_version = self.resource_version
                self._set_health(SYNCED)
            elif not self._list_until_done():
                return
            while not self.stop_event.is_set():
                self._watch_once()
        finally:
            self._set_health(STOPPED)

    def list_once(self) -> None:
        """One list + replace, raising on failure (for `mirror --once`)."""
        items, rv = self._list()
        self._replace(items, rv)

    def stop(self) -> None:
        self.stop_event.set()

    # ------------------------------------------------------------------ loop

    def _list_until_done(self) -> bool:
        """List with back-off until it succeeds; False if stopped first."""
        while not self.stop_event.is_set():
            try:
                items, rv = self._list()
            except KubeError as exc:
                if self._fail(f"list failed: {exc}"):
                    return False
                continue
            self._replace(items, rv)
            return True
        return False

    def _replace(self, items: list[JSON], rv: str) -> None:
        self._sink.replace(self.kind, items, rv)
        self.resource_version = rv
        self.health.resource_version = rv
        self.health.last_event_at = self._now()
        self.health.error = ""
        self.health.consecutive_errors = 0
        self._backoff.reset()
        self._set_health(SYNCED)

    def _watch_once(self) -> None:
        # Spread the server-side timeouts (5–10 min) so all kinds do not reconnect at once.
        timeout = int(self._watch_timeout * (1 + self._rng.random()))
        started = self._monotonic()
        events = 0
        try:
            for event_type, obj in self._watch(self.resource_version, timeout):
                if self.stop_event.is_set():
                    return
                events += 1
                self._handle(event_type, obj)
        except KubeTimeout:
            # Silence longer than the inactivity timeout: a half-open connection (NAT, load balancer)
            # looks exactly like a quiet cluster, so drop it and watch again from the last rv.
            log.info("watch %s: inactive, reconnecting from %s", self.kind, self.resource_version)
            return
        except KubeError as exc:
            if exc.is_gone:
                # Our rv fell out of the server's history: only a fresh list can tell what changed.
                log.info("watch %s: %s; re-listing", self.kind, exc)
                self.health.relists += 1
                self._set_health(RELISTING)
                self._list_until_done()
                return
            self._fail(f"watch failed: {exc}")
            return
        # A normal close (server timeout, apiserver restart): resume from the last rv.
        if self.stop_event.is_set():
            return
        if events == 0 and self._monotonic() - started < SHORT_WATCH_SECONDS:
            # Closed at once with nothing in it (a proxy cutting streams, a server shedding load):
            # reconnecting immediately would hammer it, so wait as after an error.
            log.info("watch %s: closed immediately; backing off", self.kind)
            self._wait(self._backoff.next())
            return
        self._backoff.reset()
        if self.health.consecutive_errors:
            self.health.consecutive_errors = 0
            self.health.error = ""
            self._set_health(SYNCED)

    def _handle(self, event_type: str, obj: JSON) -> None:
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if event_type not in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK"):
            log.warning("watch %s: ignoring event of unknown type %r", self.kind, event_type)
            return
        self._sink.apply(self.kind, event_type, obj, rv or self.resource_version)
        if rv:
            self.resource_version = rv
            self.health.resource_version = rv
        self.health.last_event_at = self._now()
        if self.health.state != SYNCED:
            self.health.error = ""
            self.health.consecutive_errors = 0
            self._backoff.reset()
            self._set_health(SYNCED)

    def _fail(self, message: str) -> bool:
        """Record an error and back off; True if asked to stop while waiting."""
        log.warning("%s %s", self.kind, message)
        self.health.error = message
        self.health.consecutive_errors += 1
        self._set_health(ERROR)
        return self._wait(self._backoff.next())

    def _set_health(self, state: str) -> None:
        self.health.state = state
        try:
            self._sink.health(self.kind, self.health)
        except Exception:  # health reporting must never kill the watch
            log.exception("health callback for %s failed", self.kind)
