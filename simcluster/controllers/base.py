"""Plumbing shared by the simulated controllers: clocks and a level-triggered worker loop.

Every controller is a `Loop`: a thread that runs its `reconcile()` over the whole store state whenever a
store event it cares about arrives (the store callback only pokes the loop), or when a time it asked for
comes. Level-triggered full passes keep the simulation simple and deterministic. In a large world a pass costs
milliseconds, and a burst of writes would run one after every store event: a loop keeps its batch window
whatever pokes arrive in it, and a paced loop (`pace`) waits at least that many times its last pass before
the next, so that the loops a burst does not need leave the GIL to the one it does (the scheduler).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from simcluster.store import writing_as

log = logging.getLogger("simcluster.controllers")


class Clock(Protocol):
    def now(self) -> datetime: ...

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call `callback` whenever time jumps (fake clocks); real clocks never call it."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def on_change(self, callback: Callable[[], None]) -> None:
        return None


class FakeClock:
    """A clock tests move by hand; moving it wakes every controller that waits for a time."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = (start or datetime.now(UTC)).replace(microsecond=0)
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> datetime:
        with self._lock:
            self._now += timedelta(seconds=seconds)
            now = self._now
        for callback in list(self._callbacks):
            callback()
        return now

    def on_change(self, callback: Callable[[], None]) -> None:
        self._callbacks.append(callback)


def format_time(moment: datetime) -> str:
    """RFC 3339 with second resolution, as the API serializes metav1.Time."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# Upper bound for a sleep while a timed wake is pending: a fake clock pokes on change, a real one is
# re-read at least this often.
_MAX_WAIT = 5.0
_ERROR_RETRY = 0.5


KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
KUBE_SCHEDULER = "kube-scheduler"
KUBELET = "kubelet"


class Loop:
    """A worker thread running `reconcile` when poked. `reconcile` returns the seconds until it wants to
    run again by itself (None: only when poked)."""

    def __init__(
        self,
        name: str,
        reconcile: Callable[[], float | None],
        *,
        batch_delay: float = 0.0,
        pace: float = 0.0,
        manager: str | None = KUBE_CONTROLLER_MANAGER,
    ) -> None:
        self.name = name
        # the field manager its writes are recorded by (managedFields), as the component's client names itself
        self.manager = manager
        self._reconcile = reconcile
        # Wait this long after the first poke so that a burst of store events makes one pass, not many.
        self.batch_delay = batch_delay
        # …and at least `pace` times the last pass's duration: a full pass over thousands of pods, run
        # after every store event of a burst, would take the CPU (and the GIL) from the loops that do
        # the burst's work; paced, a loop spends at most 1 / (1 + pace) of the time in its passes.
        self.pace = pace
        self._last_cost = 0.0
        self._cond = threading.Condition()
        self._dirty = True
        self._busy = False
        self._stopped = False
        self._wake_at: float | None = None
        self._thread = threading.Thread(target=self._run, name=f"simcluster-{name}", daemon=True)
        self.passes = 0
        self.busy_seconds = 0.0
        self.last_error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.request_stop()
        self.join(timeout)

    def request_stop(self) -> None:
        """End the loop after its current pass, without waiting for it (`join` waits)."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def join(self, timeout: float) -> None:
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def poke(self) -> None:
        """A change this loop watches. Notifies only the first since the last pass: the loop is not
        waiting for a change once it is dirty (its batch window sleeps to its deadline), and a burst
        pokes every loop for every store write."""
        with self._cond:
            if self._dirty:
                return
            self._dirty = True
            self._cond.notify_all()

    def idle(self) -> bool:
        with self._cond:
            return not self._dirty and not self._busy

    def wait_idle(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._dirty or self._busy:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._stopped:
                    return False
                self._cond.wait(remaining)
            return True

    def _run(self) -> None:
        with writing_as(self.manager):
            self._passes()

    def _passes(self) -> None:
        while True:
            with self._cond:
                while not self._dirty and not self._stopped:
                    if self._wake_at is not None and time.monotonic() >= self._wake_at:
                        break
                    wait = (
                        _MAX_WAIT
                        if self._wake_at is None
                        else min(_MAX_WAIT, self._wake_at - time.monotonic())
                    )
                    self._cond.wait(max(wait, 0.0))
                if self._stopped:
                    return
                batch = max(self.batch_delay, self.pace * self._last_cost)
                if batch and self._dirty:
                    # Until the deadline, whatever pokes arrive meanwhile join this pass (they do not
                    # notify a dirty loop). A wait that any poke ended made one pass per store event.
                    deadline = time.monotonic() + batch
                    while not self._stopped and (remaining := deadline - time.monotonic()) > 0:
                        self._cond.wait(remaining)
                    if self._stopped:
                        return
                self._dirty = False
                self._busy = True
                self._wake_at = None
            delay: float | None
            started = time.monotonic()
            try:
                delay = self._reconcile()
                self.last_error = None
            except Exception as error:  # a controller must survive one bad pass; the next pass retries
                log.exception("%s: reconcile failed", self.name)
                self.last_error = error
                delay = _ERROR_RETRY
            finally:
                self.passes += 1
                self._last_cost = time.monotonic() - started
                self.busy_seconds += self._last_cost
            with self._cond:
                self._busy = False
                if delay is not None:
                    wake = time.monotonic() + max(delay, 0.0)
                    self._wake_at = wake if self._wake_at is None else min(self._wake_at, wake)
                self._cond.notify_all()


def stop_loops(loops: list[Loop], timeout: float = 5.0) -> None:
    """Ask every loop to stop, then wait for them: a loop in the middle of a long pass delays the others'
    end by nothing, and the whole stop by at most `timeout` (one after the other, it was one each)."""
    for loop in loops:
        loop.request_stop()
    deadline = time.monotonic() + timeout
    for loop in loops:
        loop.join(max(0.0, deadline - time.monotonic()))
