"""The namespace controller, kube-controller-manager's: it empties a namespace being deleted, then lets it go.

For a namespace marked deleted whose `spec.finalizers` still hold `kubernetes` (upstream's
namespacedResourcesDeleter):

- its phase becomes Terminating if it is not already;
- every namespaced kind that can be deleted is emptied by a DeleteCollection with propagationPolicy
  Background (a pod on a node gets its graceful deletion, which the simulated kubelet finishes; an object
  that finalizers hold stays, marked), then listed again;
- what remains is written to the namespace's status conditions in upstream's words: NamespaceContentRemaining
  (`pods. has 1 resource instances`), NamespaceFinalizersRemaining (`example.com/hold in 1 resource
  instances`), NamespaceDeletionContentFailure (what could not be deleted), each with its "ok" variant
  (status False) once it no longer holds, beside NamespaceDeletionDiscoveryFailure and
  NamespaceDeletionGVParsingFailure, which never fail here;
- once nothing remains, the `kubernetes` finalizer goes through the `finalize` subresource, and the API server
  deletes the namespace when `metadata.finalizers` is empty too.

It hears every store change (`observe`, under the store lock) and has work only when one touches a namespace
being deleted or what is in it.
"""

from __future__ import annotations

import copy
import threading
from collections import Counter
from typing import Any

from dra.taints import parse_time
from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import is_terminal, meta
from simcluster.errors import ApiError
from simcluster.namespaces import KUBERNETES_FINALIZER, TERMINATING, is_terminating, spec_finalizers
from simcluster.resources import RESOURCES, ResourceDef
from simcluster.store import Store

JSON = dict[str, Any]

#: upstream's default wait for finalizers on remaining content (finalizerEstimateSeconds)
FINALIZER_ESTIMATE_SECONDS = 15
#: seconds before another pass when deleting content failed (upstream requeues with a rate limit)
FAILURE_RETRY = 1.0

#: the conditions the controller keeps, in the order it adds them, with the reason and message that say
#: "nothing wrong" (status False)
_CONDITIONS: tuple[tuple[str, str, str], ...] = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)  # fmt: skip


def _deletable() -> list[ResourceDef]:
    """The namespaced kinds discovery says can be deleted (reviews cannot)."""
    return sorted(
        (r for r in RESOURCES if r.namespaced and "delete" in r.verbs), key=lambda r: (r.group, r.plural)
    )


class NamespaceController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._lock = threading.Lock()  # guards changes to `_terminating`; `observe` reads it without
        self._terminating: set[str] = set()  # namespaces marked deleted that still hold our finalizer

    def sync(self) -> None:
        """Read what the store holds now; call with the store lock held, before `observe` hears changes."""
        for entry in self.store.snapshot("namespaces")[1]:
            self.observe("ADDED", "namespaces", entry.obj)

    def observe(self, event_type: str, plural: str, obj: JSON) -> bool:
        """Take in one committed change; True when it gave the controller work."""
        metadata = obj["metadata"]
        if plural != "namespaces":
            namespace = metadata.get("namespace")
            return bool(namespace) and namespace in self._terminating
        name = str(metadata["name"])
        pending = (
            event_type != "DELETED"
            and bool(metadata.get("deletionTimestamp"))
            and KUBERNETES_FINALIZER in spec_finalizers(obj)
        )
        with self._lock:
            if pending:
                self._terminating.add(name)
            else:
                self._terminating.discard(name)
        return pending

    def reconcile(self) -> float | None:
        with self._lock:
            names = sorted(self._terminating)
        wait: float | None = None
        for name in names:
            try:
                again = self._sync(name)
            except ApiError as error:
                if error.status not in (404, 409):
                    raise
                again = 0.05 if error.status == 409 else None  # changed under us: look again soon
            if again is not None:
                wait = again if wait is None else min(wait, again)
        return wait

    def _sync(self, name: str) -> float | None:
        """One pass over a namespace being deleted; the seconds until the next, None when done."""
        namespace = self.store.get("namespaces", name)
        deleted_at = parse_time(meta(namespace).get("deletionTimestamp"))
        if deleted_at is None or KUBERNETES_FINALIZER not in spec_finalizers(namespace):
            return None
        if not is_terminating(namespace):
            namespace.setdefault("status", {})["phase"] = TERMINATING
            namespace = self.store.update("namespaces", namespace, subresource="status")
        remaining: dict[str, int] = {}
        held: Counter[str] = Counter()
        failures: list[str] = []
        estimate = 0
        for resource in _deletable():
            wait = self._graceful_estimate(resource, name, deleted_at.timestamp())
            try:
                self.store.delete_collection(resource.plural, namespace=name, propagation_policy="Background")
            except ApiError as error:
                failures.append(error.message)
                estimate = max(estimate, wait)
                continue
            left = [entry.obj for entry in self.store.snapshot(resource.plural, namespace=name)[1]]
            if not left:
                continue
            finalizers = Counter(str(f) for obj in left for f in meta(obj).get("finalizers") or [])
            if not wait and finalizers:
                wait = FINALIZER_ESTIMATE_SECONDS
            elif not wait:  # nothing should hold it: upstream calls that a failure
                failures.append(
                    f"unexpected items still remain in namespace: {name} for gvr: "
                    f"{resource.group}/{resource.version}, Resource={resource.plural}"
                )
            estimate = max(estimate, wait)
            remaining[f"{resource.plural}.{resource.group}"] = len(left)
            held.update(finalizers)
        namespace = self._write_conditions(namespace, remaining, held, failures)
        if failures:
            return FAILURE_RETRY
        if estimate:
            return float(estimate // 2 + 1)  # upstream's requeue; any change in the namespace comes sooner
        finalized = copy.deepcopy(namespace)
        kept = sorted({f for f in spec_finalizers(namespace) if f != KUBERNETES_FINALIZER})
        if kept:
            finalized["spec"]["finalizers"] = kept
        else:
            finalized["spec"].pop("finalizers", None)
        self.store.update("namespaces", finalized, subresource="finalize")
        return None

    def _graceful_estimate(self, resource: ResourceDef, namespace: str, deleted_at: float) -> int:
        """Seconds the kind's objects may still take to go by themselves: for pods, the longest grace period of
        those not finished, 0 once that long has passed since the namespace was deleted."""
        if (resource.group, resource.plural) != ("", "pods"):
            return 0
        estimate = 0
        for entry in self.store.snapshot("pods", namespace=namespace)[1]:
            grace = (entry.obj.get("spec") or {}).get("terminationGracePeriodSeconds")
            if not is_terminal(entry.obj) and isinstance(grace, int) and grace > estimate:
                estimate = grace
        if self.clock.now().timestamp() - deleted_at >= estimate:
            return 0
        return estimate

    def _write_conditions(
        self, namespace: JSON, remaining: dict[str, int], held: Counter[str], failures: list[str]
    ) -> JSON:
        """Set the controller's conditions (upstream's namespaceConditionUpdater) and write the status if
        they changed; the namespace as it is afterwards."""
        failing: dict[str, tuple[str, str]] = {}
        if remaining:
            parts = sorted(f"{kind} has {count} resource instances" for kind, count in remaining.items())
            failing["NamespaceContentRemaining"] = (
                "SomeResourcesRemain", "Some resources are remaining: " + ", ".join(parts),
            )  # fmt: skip
        if held:
            parts = sorted(f"{finalizer} in {count} resource instances" for finalizer, count in held.items())
            failing["NamespaceFinalizersRemaining"] = (
                "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: " + ", ".join(parts),
            )
        if failures:
            failing["NamespaceDeletionContentFailure"] = (
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(failures)} remaining: "
                + ", ".join(sorted(failures)),
            )
        now = format_time(self.clock.now())
        status = namespace.setdefault("status", {})
        conditions: list[JSON] = [dict(c) for c in status.get("conditions") or []]
        changed = False
        for kind, ok_reason, ok_message in _CONDITIONS:
            wanted_status, (reason, message) = (
                ("True", failing[kind]) if kind in failing else ("False", (ok_reason, ok_message))
            )
            current = next((c for c in conditions if c.get("type") == kind), None)
            if current is None:
                conditions.append({"type": kind, "status": wanted_status, "lastTransitionTime": now,
                                   "reason": reason, "message": message})  # fmt: skip
                changed = True
            elif (current.get("status"), current.get("reason"), current.get("message")) != (
                wanted_status,
                reason,
                message,
            ):
                if current.get("status") != wanted_status:
                    current["lastTransitionTime"] = now
                current.update(status=wanted_status, reason=reason, message=message)
                changed = True
        if not changed:
            return namespace
        status["conditions"] = conditions
        return self.store.update("namespaces", namespace, subresource="status")
