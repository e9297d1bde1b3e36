"""Leader election over a coordination.k8s.io/v1 Lease, with client-go's semantics. No Django.

The Lease's spec is the record: `holderIdentity`, `leaseDurationSeconds`, `acquireTime`, `renewTime`,
`leaseTransitions`. A candidate takes the Lease when nobody holds it, or when the record it last saw has not
changed for the holder's `leaseDurationSeconds` measured on its *own* clock from when it saw it (never by
comparing renewTime with local time: clocks differ between nodes). Every write is a PUT guarded by the
Lease's resourceVersion, so of two candidates exactly one wins (the other gets 409 and stays follower).

The leader renews every `duration / 3`. When renewing has not succeeded for `renew_deadline` (2/3 of the
duration) it stops leading — before any follower may take over (a full duration after the last renewal it
saw), so two leaders never write at once. `may_write()` is the fence the mirror's writer checks before each
batch. On a clean stop the leader releases the Lease (empty holder, duration 1 s), so a follower takes over
at its next try instead of waiting for the Lease to expire.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from inventory.kube.client import KubeClient, KubeError

log = logging.getLogger(__name__)

JSON = dict[str, Any]
LEASES = "leases"
FOLLOWER = "follower"
LEADER = "leader"


def default_identity(pod_name: str = "") -> str:
    """The pod's name when known (unique per replica), else host name plus a random suffix, as client-go."""
    return pod_name or f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}_{os.getpid()}"


def micro_time(seconds: float) -> str:
    """A Kubernetes MicroTime: RFC 3339 with microseconds."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        client: KubeClient,
        *,
        name: str,
        namespace: str,
        identity: str,
        duration_seconds: int = 15,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.name = name
        self.namespace = namespace
        self.identity = identity
        self.duration = int(duration_seconds)
        self.renew_interval = self.duration / 3
        self.renew_deadline = self.duration * 2 / 3
        self.retry_period = max(0.2, self.duration / 6)
        self._now = wall_clock
        self._monotonic = monotonic
        self._observed: JSON | None = None  # the last spec seen
        self._observed_at = 0.0  # monotonic, when it was first seen
        self._last_renew: float | None = None  # monotonic, our last successful acquire or renew
        self._lock = threading.Lock()
        self.role = FOLLOWER
        self.holder = ""

    # ------------------------------------------------------------------ the record

    def _observe(self, spec: JSON) -> None:
        if spec != self._observed:
            self._observed = dict(spec)
            self._observed_at = self._monotonic()
        self.holder = str(spec.get("holderIdentity") or "")

    def try_acquire_or_renew(self) -> bool:
        """One attempt: True when we hold the Lease afterwards."""
        now = self._now()
        try:
            lease = self.client.get_object(LEASES, self.name, namespace=self.namespace)
        except KubeError as exc:
            if exc.status != 404:
                raise
            return self._create(now)
        spec: JSON = lease.get("spec") or {}
        self._observe(spec)
        holder = str(spec.get("holderIdentity") or "")
        held_for = float(spec.get("leaseDurationSeconds") or self.duration)
        if holder and holder != self.identity and self._monotonic() < self._observed_at + held_for:
            return False  # someone else holds it and we have not seen it go quiet for a whole duration
        ours = holder == self.identity
        new_spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.duration,
            "acquireTime": spec.get("acquireTime") if ours and spec.get("acquireTime") else micro_time(now),
            "renewTime": micro_time(now),
            "leaseTransitions": int(spec.get("leaseTransitions") or 0) + (0 if ours else 1),
        }
        body = {**lease, "spec": new_spec}
        try:
            stored = self.client.replace_object(LEASES, self.name, body, namespace=self.namespace)
        except KubeError as exc:
            if exc.status == 409:  # another candidate wrote first
                return False
            raise
        if not ours:
            log.info("lease %s/%s: %s took over from %r", self.namespace, self.name, self.identity, holder)
        self._observe(stored.get("spec") or new_spec)
        return True

    def _create(self, now: float) -> bool:
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.duration,
                "acquireTime": micro_time(now),
                "renewTime": micro_time(now),
                "leaseTransitions": 0,
            },
        }
        try:
            stored = self.client.create_object(LEASES, lease, namespace=self.namespace)
        except KubeError as exc:
            if exc.status == 409:
                return False
            raise
        log.info("lease %s/%s: created, held by %s", self.namespace, self.name, self.identity)
        self._observe(stored.get("spec") or lease["spec"])
        return True

    def release(self) -> None:
        """Give the Lease up at once (a clean stop), so a follower need not wait for it to expire."""
        try:
            lease = self.client.get_object(LEASES, self.name, namespace=self.namespace)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            now = micro_time(self._now())
            released = {
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "acquireTime": now,
                "renewTime": now,
                "leaseTransitions": int(spec.get("leaseTransitions") or 0),
            }
            self.client.replace_object(
                LEASES, self.name, {**lease, "spec": released}, namespace=self.namespace
            )
            log.info("lease %s/%s: released by %s", self.namespace, self.name, self.identity)
        except KubeError as exc:
            log.warning("lease %s/%s: could not release: %s", self.namespace, self.name, exc)

    # ------------------------------------------------------------------ the loop

    def may_write(self) -> bool:
        """True while we lead and our last renewal is recent enough that no follower can have taken over."""
        with self._lock:
            return (
                self.role == LEADER
                and self._last_renew is not None
                and self._monotonic() - self._last_renew < self.renew_deadline
            )

    def _attempt(self) -> bool:
        try:
            return self.try_acquire_or_renew()
        except KubeError as exc:
            log.warning("lease %s/%s: %s", self.namespace, self.name, exc)
            return False

    def run(
        self,
        *,
        stop: threading.Event,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        release_on_stop: bool = True,
    ) -> None:
        """Campaign, lead until renewing fails or `stop`, then campaign again; returns when stopped."""
        while not stop.is_set():
            if not self._attempt():
                stop.wait(self.retry_period)
                continue
            with self._lock:
                self.role = LEADER
                self._last_renew = self._monotonic()
            log.info("lease %s/%s: %s is the leader", self.namespace, self.name, self.identity)
            on_started_leading()
            try:
                self._renew_until_lost(stop)
            finally:
                # Still the leader while the mirror winds down (may_write holds only while the last renewal
                # is recent): its last batch and "stopped" states are written by the Lease's holder.
                try:
                    on_stopped_leading()
                finally:
                    with self._lock:
                        self.role = FOLLOWER
            if stop.is_set() and release_on_stop:
                self.release()

    def _renew_until_lost(self, stop: threading.Event) -> None:
        wait = self.renew_interval
        while not stop.wait(wait):
            if self._attempt():
                with self._lock:
                    self._last_renew = self._monotonic()
                wait = self.renew_interval
                continue
            assert self._last_renew is not None
            if self.holder and self.holder != self.identity:
                log.warning("lease %s/%s: now held by %s; %s stops leading", self.namespace, self.name,
                            self.holder, self.identity)  # fmt: skip
                return
            if self._monotonic() - self._last_renew >= self.renew_deadline:
                log.warning(
                    "lease %s/%s: %s could not renew for %.0fs; stops leading",
                    self.namespace,
                    self.name,
                    self.identity,
                    self.renew_deadline,
                )
                return
            wait = self.retry_period
