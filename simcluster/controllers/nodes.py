"""Nodes: the scheduler's readiness check, and the node lifecycle controller's taint for a cordoned node.

Node selectors, cordons and taint toleration are `dra.nodefit`, the rule the what-if answers use too.

The node lifecycle controller (kube-controller-manager's, TaintNodesByCondition) keeps the taint
`node.kubernetes.io/unschedulable:NoSchedule` on every node whose `spec.unschedulable` is true and off the
others, with the time it was added, as `kubectl describe node` shows after `kubectl cordon`. Its other
condition taints (not-ready, unreachable, pressure) have no cause here: simulated nodes stay Ready.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from typing import Any

from dra.nodefit import UNSCHEDULABLE_TAINT_KEY
from dra.taints import NO_SCHEDULE
from simcluster.controllers.base import Clock, format_time
from simcluster.errors import ApiError
from simcluster.store import Store

JSON = dict[str, Any]


def node_ready(node: Mapping[str, Any]) -> bool:
    """The node's Ready condition is not False (a NotReady node carries the not-ready taint upstream)."""
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = [c for c in conditions if c.get("type") == "Ready"]
    return not ready or ready[0].get("status") == "True"


def _is_unschedulable_taint(taint: Any) -> bool:
    return (
        isinstance(taint, Mapping)
        and taint.get("key") == UNSCHEDULABLE_TAINT_KEY
        and (taint.get("effect") == NO_SCHEDULE)
    )


def _out_of_step(node: Mapping[str, Any]) -> bool:
    spec = node.get("spec") or {}
    tainted = any(_is_unschedulable_taint(t) for t in spec.get("taints") or ())
    return bool(spec.get("unschedulable")) != tainted


class NodeLifecycle:
    """Adds the unschedulable taint to a cordoned node and takes it off an uncordoned one."""

    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._lock = threading.Lock()
        self._pending: set[str] = set()  # nodes whose taint disagrees with spec.unschedulable

    def sync(self) -> None:
        """Read what the store holds now; call with the store lock held, before `observe` hears changes."""
        for entry in self.store.snapshot("nodes")[1]:
            self.observe("ADDED", "nodes", entry.obj)

    def observe(self, event_type: str, plural: str, obj: JSON) -> bool:
        """Take in one committed change (under the store lock); True when it gave the controller work."""
        if plural != "nodes" or event_type == "DELETED" or not _out_of_step(obj):
            return False
        with self._lock:
            self._pending.add(str((obj.get("metadata") or {}).get("name", "")))
        return True

    def reconcile(self) -> float | None:
        with self._lock:
            names, self._pending = sorted(self._pending), set()
        again: float | None = None
        for name in names:
            try:
                self._sync(name)
            except ApiError as error:
                if error.status != 409:
                    if error.status != 404:
                        raise
                    continue
                with self._lock:  # changed under us: look again soon
                    self._pending.add(name)
                again = 0.05
        return again

    def _sync(self, name: str) -> None:
        node = copy.deepcopy(self.store.get("nodes", name))
        if not _out_of_step(node):
            return
        spec = node.setdefault("spec", {})
        taints = [t for t in spec.get("taints") or () if not _is_unschedulable_taint(t)]
        if spec.get("unschedulable"):
            taints.append(
                {
                    "key": UNSCHEDULABLE_TAINT_KEY,
                    "effect": NO_SCHEDULE,
                    "timeAdded": format_time(self.clock.now()),
                }
            )
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        self.store.update("nodes", node)
