"""Pod lifecycle, the kubelet's part: finish graceful deletions and start pods bound by someone else.

With graceful pod deletion a DELETE only sets `deletionTimestamp`; the simulated kubelet stops the pod at
once and removes it (a delete with grace period 0). A pod that finalizers hold (the garbage collector's
`foregroundDeletion` while its claims go, say) is stopped as a kubelet stops it: its phase becomes terminal,
which lets the claim controller release its claims, and the grace period ends; the API server removes it
once the last finalizer goes. Pods created with `spec.nodeName` already set and no claims to wait for are
marked Running.
"""

from __future__ import annotations

from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import (
    is_deleting,
    is_terminal,
    meta,
    name_of,
    namespace_of,
    pod_generation,
    post_containers_started,
    post_containers_stopping,
    read_all,
    set_condition,
    uid_of,
)
from simcluster.errors import ApiError
from simcluster.store import Store

WATCHES = frozenset({"pods"})


class PodLifecycle:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def reconcile(self) -> float | None:
        for pod in read_all(self.store, "pods"):
            try:
                if is_deleting(pod):
                    held = bool(meta(pod).get("finalizers"))
                    node_name = str((pod.get("spec") or {}).get("nodeName") or "")
                    if node_name and (pod.get("status") or {}).get("phase") == "Running":
                        post_containers_stopping(self.store, self.clock, pod, node_name)
                    if held and (pod.get("spec") or {}).get("nodeName") and not is_terminal(pod):
                        self._stop(pod)
                    if not held or meta(pod).get("deletionGracePeriodSeconds"):
                        self.store.delete(
                            "pods",
                            name_of(pod),
                            namespace=namespace_of(pod),
                            uid=uid_of(pod),
                            grace_period_seconds=0,
                        )
                elif self._started_elsewhere(pod):
                    now = format_time(self.clock.now())
                    self.store.patch(
                        "pods",
                        name_of(pod),
                        {
                            "status": {
                                "observedGeneration": pod_generation(pod),
                                "phase": "Running",
                                "startTime": now,
                                "conditions": [
                                    {
                                        "type": t,
                                        "observedGeneration": pod_generation(pod),
                                        "status": "True",
                                        "lastTransitionTime": now,
                                    }
                                    for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
                                ],
                            }
                        },
                        namespace=namespace_of(pod),
                        subresource="status",
                    )
                    post_containers_started(
                        self.store, self.clock, pod, str((pod.get("spec") or {}).get("nodeName"))
                    )
            except ApiError as error:
                if error.status not in (404, 409):
                    raise
        return None

    def _stop(self, pod: dict[str, object]) -> None:
        """Stop a deleted pod's containers: a pod the kubelet killed for its deletion ends Failed (its
        containers were terminated by the system)."""
        self.complete(namespace_of(pod), name_of(pod), phase="Failed")

    def complete(self, namespace: str, name: str, *, phase: str = "Succeeded") -> None:
        """Finish a pod (Succeeded or Failed): pods never end by themselves in the simulation."""
        now = format_time(self.clock.now())
        current = self.store.get("pods", name, namespace=namespace)
        conditions = (current.get("status") or {}).get("conditions") or []
        for kind in ("Ready", "ContainersReady"):
            done = {"type": kind, "observedGeneration": pod_generation(current), "status": "False",
                    "reason": "PodCompleted", "lastTransitionTime": now}  # fmt: skip
            conditions = set_condition(conditions, done)
        status = {"observedGeneration": pod_generation(current), "phase": phase, "conditions": conditions}
        self.store.patch("pods", name, {"status": status}, namespace=namespace, subresource="status")

    @staticmethod
    def _started_elsewhere(pod: dict[str, object]) -> bool:
        spec = pod.get("spec") or {}
        status = pod.get("status") or {}
        assert isinstance(spec, dict) and isinstance(status, dict)
        return bool(
            spec.get("nodeName")
            and status.get("phase") in (None, "Pending")
            and not spec.get("resourceClaims")
            and not is_terminal(pod)
            and not any(c.get("type") == "PodScheduled" for c in status.get("conditions") or [])
        )
