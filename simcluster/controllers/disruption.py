"""The disruption controller: keeps every PodDisruptionBudget's status current, as upstream's does.

Healthy pods are the selected pods that are Ready, not being deleted and not recorded in `disruptedPods`
by an eviction less than two minutes ago (entries for pods that went away, or that outlived that time, are
dropped). `minAvailable` as a number is compared with the selected pods; `maxUnavailable` or a percentage
needs the expected scale of the pods' controllers (a ReplicaSet's replicas, or its Deployment's); a pod
without a controller it can scale is a sync failure (DisruptionAllowed=False, reason SyncFailed, no
disruptions). `disruptionsAllowed = currentHealthy - desiredHealthy` (never negative, 0 with no expected
pods), `observedGeneration` follows the spec.
"""

from __future__ import annotations

from typing import Any

from dra.disruption import BudgetError, disruptions_allowed, expected_and_desired, is_healthy
from dra.selection import SelectorError, label_selector
from dra.taints import parse_time
from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import controller_of, meta, name_of, namespace_of, read_all
from simcluster.errors import ApiError
from simcluster.evictions import (
    DELETION_TIMEOUT_SECONDS,
    disruption_allowed_condition,
    set_status_condition,
)
from simcluster.jsondata import clone
from simcluster.store import Store

JSON = dict[str, Any]
WATCHES = frozenset({"poddisruptionbudgets", "pods", "replicasets", "deployments"})


SyncError = BudgetError  # a budget the controller cannot compute: DisruptionAllowed=False, SyncFailed


class DisruptionController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def wants(self, plural: str, obj: JSON) -> bool:
        """Pods, ReplicaSets and Deployments matter only while some PodDisruptionBudget exists (a budget's
        own creation wakes the controller, which then reads them all)."""
        return plural == "poddisruptionbudgets" or self.store.count("poddisruptionbudgets") > 0

    def reconcile(self) -> float | None:
        budgets = read_all(self.store, "poddisruptionbudgets")
        if not budgets:
            return None
        pods = read_all(self.store, "pods")
        replicasets = {meta(rs).get("uid"): rs for rs in read_all(self.store, "replicasets")}
        deployments = {meta(d).get("uid"): d for d in read_all(self.store, "deployments")}
        recheck: float | None = None
        for pdb in budgets:
            try:
                wait = self._sync(pdb, pods, replicasets, deployments)
            except ApiError as error:
                if error.status not in (404, 409):
                    raise
                wait = 0.05
            if wait is not None:
                recheck = wait if recheck is None else min(recheck, wait)
        return recheck

    def _sync(
        self, pdb: JSON, pods: list[JSON], replicasets: dict[Any, JSON], deployments: dict[Any, JSON]
    ) -> float | None:
        now = self.clock.now()
        stamp = format_time(now)
        status = clone(pdb.get("status") or {})
        spec = pdb.get("spec") or {}
        try:
            selector = label_selector(spec.get("selector"))
        except SelectorError:
            selector = None
        selected = [
            p for p in pods
            if namespace_of(p) == namespace_of(pdb) and selector is not None
            and selector.matches(meta(p).get("labels") or {})
        ]  # fmt: skip
        recheck: float | None = None
        disrupted: dict[str, str] = {}
        for pod in selected:
            if meta(pod).get("deletionTimestamp"):
                continue
            when = (status.get("disruptedPods") or {}).get(name_of(pod))
            moment = parse_time(when) if when else None
            if moment is None:
                continue
            left = (moment - now).total_seconds() + DELETION_TIMEOUT_SECONDS
            if left > 0:
                disrupted[name_of(pod)] = str(when)
                recheck = left if recheck is None else min(recheck, left)
        try:
            expected, desired = self._expected(spec, selected, replicasets, deployments)
        except SyncError as error:
            status["disruptionsAllowed"] = 0
            set_status_condition(status, {"type": "DisruptionAllowed", "status": "False",
                                          "observedGeneration": int(status.get("observedGeneration") or 0),
                                          "lastTransitionTime": stamp, "reason": "SyncFailed", "message": str(error)})  # fmt: skip
            self._write(pdb, status)
            return recheck
        healthy = sum(1 for p in selected if is_healthy(p, disrupted=disrupted))
        allowed = disruptions_allowed(healthy=healthy, desired=desired, expected=expected)
        status.update({
            "currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
            "disruptionsAllowed": allowed, "observedGeneration": int(meta(pdb).get("generation") or 1),
        })  # fmt: skip
        if disrupted:
            status["disruptedPods"] = disrupted
        else:
            status.pop("disruptedPods", None)
        disruption_allowed_condition(status, stamp)
        self._write(pdb, status)
        return recheck

    def _expected(self, spec: JSON, pods: list[JSON], replicasets: dict[Any, JSON],
                  deployments: dict[Any, JSON]) -> tuple[int, int]:  # fmt: skip
        """(expectedPods, desiredHealthy)."""
        return expected_and_desired(
            spec, selected=len(pods), expected_scale=lambda: self._scale(pods, replicasets, deployments)
        )

    @staticmethod
    def _scale(pods: list[JSON], replicasets: dict[Any, JSON], deployments: dict[Any, JSON]) -> int:
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                raise SyncError(f'found no controller ref for pod "{name_of(pod)}"')
            rs = replicasets.get(ref.get("uid")) if ref.get("kind") == "ReplicaSet" else None
            if rs is None:
                raise SyncError(f'found no controllers for pod "{name_of(pod)}"')
            owner = controller_of(rs)
            deployment = (
                deployments.get(owner.get("uid")) if owner and owner.get("kind") == "Deployment" else None
            )
            if deployment is not None:
                scales[str(meta(deployment).get("uid"))] = int(
                    (deployment.get("spec") or {}).get("replicas", 1)
                )
            elif owner is None:
                scales[str(meta(rs).get("uid"))] = int((rs.get("spec") or {}).get("replicas", 1))
            else:
                raise SyncError(f'found no controllers for pod "{name_of(pod)}"')
        return sum(scales.values())

    def _write(self, pdb: JSON, status: JSON) -> None:
        if status == (pdb.get("status") or {}):
            return
        updated = clone(pdb)
        updated["status"] = status
        self.store.update("poddisruptionbudgets", updated, subresource="status")
