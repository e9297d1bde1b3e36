"""Minimal ReplicaSet and Job controllers: keep the wanted number of pods, so evicted pods get replacements.

A ReplicaSet keeps `spec.replicas` live pods (generateName `<rs>-`); a Job keeps `spec.parallelism` pods
running until `spec.completions` have succeeded (pods never complete in the simulation unless a test sets
their phase). Both write a small `status` and label the pods as upstream does, and record what they did as
upstream's do: SuccessfulCreate and SuccessfulDelete (`Created pod: <name>`), a Job's Completed.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any

from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import (
    controller_of,
    creation_time,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    pod_from_template,
    post_event,
    read_all,
    set_condition,
    uid_of,
)
from simcluster.errors import ApiError, is_namespace_terminating
from simcluster.store import Store

JSON = dict[str, Any]
WATCHES = frozenset({"pods", "replicasets", "jobs"})
#: seconds to wait after the API server refused an owner's pod, doubled per refusal up to the second
#: figure (upstream's workqueue backs off from 5 ms to 1,000 s; each try is a FailedCreate event)
CREATE_BACKOFF = (1.0, 300.0)
RS_COMPONENT = "replicaset-controller"
JOB_COMPONENT = "job-controller"


class OwnerController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self.created = 0
        #: owner uid → (not before, the next wait) after its pod was refused
        self._backoff: dict[str, tuple[datetime, float]] = {}

    def reconcile(self) -> float | None:
        owned: dict[str, list[JSON]] = {}
        for pod in read_all(self.store, "pods"):
            ref = controller_of(pod)
            if ref:
                owned.setdefault(str(ref.get("uid")), []).append(pod)
        conflict = False
        now = self.clock.now()
        live: set[str] = set()
        for plural, sync in (("replicasets", self._sync_replicaset), ("jobs", self._sync_job)):
            for owner in read_all(self.store, plural):
                live.add(uid_of(owner))
                waiting = self._backoff.get(uid_of(owner))
                if is_deleting(owner) or (waiting is not None and waiting[0] > now):
                    continue
                try:
                    sync(owner, owned.get(uid_of(owner), []))
                except ApiError as error:
                    if error.status not in (404, 409) and not is_namespace_terminating(error):
                        raise
                    conflict = conflict or error.status == 409
        for uid in set(self._backoff) - live:
            del self._backoff[uid]
        waits = [(until - now).total_seconds() for until, _next in self._backoff.values()]
        if conflict:
            waits.append(0.05)
        return max(0.0, min(waits)) if waits else None

    # --- ReplicaSet ------------------------------------------------------------------------------------

    def _sync_replicaset(self, rs: JSON, pods: list[JSON]) -> None:
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        active = [
            p
            for p in pods
            if not is_deleting(p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        refused = None
        for _ in range(wanted - len(active)):
            refused = self._create_pod(rs, {}, RS_COMPONENT)
            if refused is not None:
                break
        if len(active) > wanted:
            # Upstream deletes unscheduled pods first, then the newest.
            surplus = sorted(
                active,
                key=lambda p: (bool((p.get("spec") or {}).get("nodeName")), _negated_time(p)),
            )[: len(active) - wanted]
            for pod in surplus:
                self.store.delete("pods", name_of(pod), namespace=namespace_of(pod), uid=uid_of(pod))
                post_event(self.store, self.clock, rs, reason="SuccessfulDelete", message=f"Deleted pod: {name_of(pod)}",
                           component=RS_COMPONENT)  # fmt: skip
        ready = sum(1 for p in active if (p.get("status") or {}).get("phase") == "Running")
        count = min(len(active), wanted) if len(active) > wanted else len(active)
        # replicas is always written; the other counts are omitempty, so a zero one is left out (and removed).
        counts = {"fullyLabeledReplicas": count, "readyReplicas": ready, "availableReplicas": ready}
        # ReplicaFailure (calculateStatus): set when a pod was refused and none is set, removed once the
        # replicas are managed without an error
        conditions = list((rs.get("status") or {}).get("conditions") or [])
        failure = [c for c in conditions if c.get("type") == "ReplicaFailure"]
        if refused is not None and not failure:
            conditions.append({
                "type": "ReplicaFailure", "status": "True", "lastTransitionTime": format_time(self.clock.now()),
                "reason": "FailedCreate", "message": refused.message,
            })  # fmt: skip
        elif refused is None and failure:
            conditions = [c for c in conditions if c.get("type") != "ReplicaFailure"]
        self._write_status(
            "replicasets",
            rs,
            {
                "replicas": count,
                **{key: value or None for key, value in counts.items()},
                "observedGeneration": int(meta(rs).get("generation", 1)),
                "conditions": conditions or None,
            },
        )
        self._after_creates(rs, refused, RS_COMPONENT)

    # --- Job -------------------------------------------------------------------------------------------

    def _sync_job(self, job: JSON, pods: list[JSON]) -> None:
        spec = job.get("spec") or {}
        parallelism = int(spec.get("parallelism", 1))
        completions = int(
            spec.get("completions", parallelism) if spec.get("completions") is not None else parallelism
        )
        if spec.get("suspend"):
            parallelism = 0
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        failed = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed")
        active = [
            p
            for p in pods
            if not is_deleting(p) and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        wanted = max(0, min(parallelism, completions - succeeded))
        labels = {
            "batch.kubernetes.io/controller-uid": uid_of(job),
            "batch.kubernetes.io/job-name": name_of(job),
            "controller-uid": uid_of(job),
            "job-name": name_of(job),
        }
        refused = None
        created = 0
        for _ in range(wanted - len(active)):
            refused = self._create_pod(job, labels, JOB_COMPONENT)
            if refused is not None:
                break
            created += 1
        self._after_creates(job, refused, JOB_COMPONENT)
        # active, succeeded and failed are omitempty counts (a zero is left out, None removes it); ready is
        # a pointer the controller always sets
        status: JSON = {
            "active": len(active) + created or None,
            "ready": sum(1 for p in active if (p.get("status") or {}).get("phase") == "Running"),
            "succeeded": succeeded or None,
            "failed": failed or None,
            "startTime": (job.get("status") or {}).get("startTime") or format_time(self.clock.now()),
        }
        if succeeded >= completions:
            status["active"] = None
            status["completionTime"] = (job.get("status") or {}).get("completionTime") or format_time(
                self.clock.now()
            )
            # the job controller (1.31+) marks SuccessCriteriaMet, then Complete: `kubectl wait
            # --for=condition=complete` and the STATUS column read these, not the counts
            conditions = (job.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions):
                post_event(self.store, self.clock, job, reason="Completed", message="Job completed",
                           component=JOB_COMPONENT)  # fmt: skip
            now = format_time(self.clock.now())
            for kind in ("SuccessCriteriaMet", "Complete"):
                if not any(c.get("type") == kind and c.get("status") == "True" for c in conditions):
                    conditions = set_condition(
                        conditions,
                        {"type": kind, "status": "True", "reason": "CompletionsReached",
                         "message": "Reached expected number of succeeded pods", "lastProbeTime": now,
                         "lastTransitionTime": now},
                    )  # fmt: skip
            status["conditions"] = conditions
        self._write_status("jobs", job, status)

    # --- shared ----------------------------------------------------------------------------------------

    def _after_creates(self, owner: JSON, refused: ApiError | None, component: str) -> None:
        """A refused pod: the controller's FailedCreate event, and the owner waits before it tries again."""
        uid = uid_of(owner)
        if refused is None:
            self._backoff.pop(uid, None)
            return
        post_event(
            self.store, self.clock, owner, reason="FailedCreate", message=f"Error creating: {refused.message}",
            component=component, event_type="Warning",
        )  # fmt: skip
        wait = self._backoff[uid][1] if uid in self._backoff else CREATE_BACKOFF[0]
        self._backoff[uid] = (self.clock.now() + timedelta(seconds=wait), min(wait * 2, CREATE_BACKOFF[1]))

    def _create_pod(self, owner: JSON, extra_labels: dict[str, str], component: str) -> ApiError | None:
        """Create one pod of the owner's template (the controller's SuccessfulCreate event); the API server's
        refusal (admission, validation) is returned, not raised: the owner records it and backs off."""
        template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
        try:
            pod = self.store.create(
                "pods", pod_from_template(owner, template, template.get("spec") or {}, labels=extra_labels)
            )
        except ApiError as error:
            if error.status in (404, 409) or is_namespace_terminating(error):
                raise  # gone, changed, or every create fails there now: nothing to record or back off from
            return error
        self.created += 1
        post_event(self.store, self.clock, owner, reason="SuccessfulCreate", message=f"Created pod: {name_of(pod)}",
                   component=component)  # fmt: skip
        return None

    def _write_status(self, plural: str, owner: JSON, status: JSON) -> None:
        """Merge `status` in; a None value removes that field."""
        current = owner.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return
        self.store.patch(
            plural, name_of(owner), {"status": status}, namespace=namespace_of(owner), subresource="status"
        )


def _negated_time(pod: JSON) -> float:
    return -creation_time(pod)
