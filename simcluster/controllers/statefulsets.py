"""The StatefulSet controller: pods with stable names `<set>-<ordinal>`, as kube-controller-manager's
(pkg/controller/statefulset) keeps them.

Each ordinal of `[start, start + replicas)` gets its pod: hostname the pod's name, subdomain the set's
`serviceName`, the labels `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
`controller-revision-hash` (`<set>-<hash of the template>`), and for each volumeClaimTemplate the claim
`<template>-<set>-<ordinal>`, created before the pod (owned by the set when its retention policy's
whenDeleted is Delete). OrderedReady creates one pod at a time, the next once the previous is Running and
Ready, and removes the ordinals past the end from the highest down, one at a time; Parallel does both at
once. A failed pod is deleted and created again. A RollingUpdate deletes, from the highest ordinal down to
the partition, the first pod not at the update revision, and waits for each replacement to be ready; a pod
below the partition that is created again comes back at the current revision (its ControllerRevision's
template). The set's revisions are kept as `history` keeps them. Events are the stateful pod control's:
SuccessfulCreate `create Pod web-0 in StatefulSet web successful`, SuccessfulDelete, and
`create Claim data-web-0 Pod web-0 in StatefulSet web success`.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from simcluster.controllers.base import Clock
from simcluster.controllers.common import (
    controlled_by,
    controller_of,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    owner_reference,
    pod_from_template,
    post_event,
    read_all,
    uid_of,
)
from simcluster.controllers.daemonsets import available_since, pod_ready
from simcluster.controllers.deployments import template_hash
from simcluster.controllers.history import HashCollision, bump_collisions, record, trim
from simcluster.errors import ApiError, is_namespace_terminating
from simcluster.store import Store

JSON = dict[str, Any]
WATCHES = frozenset({"statefulsets", "pods", "controllerrevisions"})
COMPONENT = "statefulset-controller"
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
#: what history.NewControllerRevision labels a revision with: the hash its name ends in
HISTORY_HASH_LABEL = "controller.kubernetes.io/hash"


def _ordinal(set_name: str, pod: JSON) -> int | None:
    name = name_of(pod)
    prefix = f"{set_name}-"
    if not name.startswith(prefix) or not name[len(prefix) :].isdigit():
        return None
    return int(name[len(prefix) :])


def _sort_ordinal(set_name: str, pod: JSON) -> int:
    ordinal = _ordinal(set_name, pod)
    return -1 if ordinal is None else ordinal


def _at_current(sts: JSON, ordinal: int, start: int) -> bool:
    """newVersionedStatefulSetPod: a RollingUpdate's pod below the partition (or, without rollingUpdate, among
    the current replicas) is created at the current revision."""
    strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        return ordinal < start + int(rolling.get("partition") or 0)
    current = int((sts.get("status") or {}).get("currentReplicas") or 0)
    return strategy.get("type", "RollingUpdate") == "RollingUpdate" and ordinal < start + current


def _healthy(pod: JSON) -> bool:
    return pod_ready(pod) and not is_deleting(pod)


class StatefulSetController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    @staticmethod
    def wants(plural: str, obj: JSON) -> bool:
        """A pod matters only when a StatefulSet controls it (as in `DaemonSetController.wants`)."""
        return plural != "pods" or controlled_by(obj, "StatefulSet")

    def reconcile(self) -> float | None:
        sets = read_all(self.store, "statefulsets")
        if not sets:
            return None
        owned: dict[str, list[JSON]] = {}
        for pod in read_all(self.store, "pods"):
            ref = controller_of(pod)
            if ref and ref.get("kind") == "StatefulSet":
                owned.setdefault(str(ref.get("uid")), []).append(pod)
        waits: list[float] = []
        for sts in sets:
            if is_deleting(sts):
                continue
            try:
                wait = self._sync(sts, owned.get(uid_of(sts), []))
            except ApiError as error:
                if error.status not in (404, 409, 422) and not is_namespace_terminating(error):
                    raise
                wait = 0.05 if error.status == 409 else None
            if wait is not None:
                waits.append(wait)
        return max(0.0, min(waits)) if waits else None

    def _sync(self, sts: JSON, pods: list[JSON]) -> float | None:
        spec = sts.get("spec") or {}
        name = name_of(sts)
        replicas = int(spec.get("replicas", 1))
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        collisions = int((sts.get("status") or {}).get("collisionCount") or 0)
        digest = template_hash(spec.get("template") or {}, collisions)
        update_revision = f"{name}-{digest}"
        # getStatefulSetRevisions: the update revision, its labels the template's
        labels = {**(meta(spec.get("template") or {}).get("labels") or {}), HISTORY_HASH_LABEL: digest}
        try:
            record(self.store, sts, update_revision, labels)
        except HashCollision:
            bump_collisions(self.store, "statefulsets", sts)
            return 0.0
        current_revision = str((sts.get("status") or {}).get("currentRevision") or update_revision)
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        by_ordinal: dict[int, JSON] = {}
        condemned: list[JSON] = []
        for pod in pods:
            ordinal = _ordinal(name, pod)
            if ordinal is not None and start <= ordinal < start + replicas:
                by_ordinal[ordinal] = pod
            else:
                condemned.append(pod)
        condemned.sort(key=lambda p: _sort_ordinal(name, p))
        current = self._current_set(sts, current_revision, update_revision)
        self._manage(sts, by_ordinal, condemned, start, replicas, update_revision, monotonic, current)
        wake = self._write_status(sts, pods, update_revision, current_revision, replicas)
        # truncateHistory: revisions past the limit that are neither current, update nor a pod's
        live = {current_revision, update_revision} | {
            str((meta(p).get("labels") or {}).get(REVISION_LABEL)) for p in pods
        }
        trim(self.store, sts, update_revision, live, count_live=False)
        return wake

    def _current_set(self, sts: JSON, current_revision: str, update_revision: str) -> tuple[JSON, str] | None:
        """ApplyRevision: the set with its current revision's template, when that revision is another than
        the update revision and still kept."""
        if current_revision == update_revision:
            return None
        try:
            revision = self.store.get("controllerrevisions", current_revision, namespace=namespace_of(sts))
        except ApiError as error:
            if error.status != 404:
                raise
            return None
        if (controller_of(revision) or {}).get("uid") != uid_of(sts):
            return None
        template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template"))
        if not isinstance(template, dict):
            return None
        template.pop("$patch", None)
        current = copy.deepcopy(sts)
        current.setdefault("spec", {})["template"] = template
        return current, current_revision

    def _manage(
        self,
        sts: JSON,
        by_ordinal: dict[int, JSON],
        condemned: list[JSON],
        start: int,
        replicas: int,
        update_revision: str,
        monotonic: bool,
        current: tuple[JSON, str] | None,
    ) -> None:
        """upstream's updateStatefulSet (monotonic: OrderedReady; otherwise Parallel, burst). `current` is the
        set at its current revision and that revision's name, when it is not the update revision."""
        spec = sts.get("spec") or {}
        ordinals = range(start, start + replicas)
        # replicas first: failed ones go, missing ones come, in order
        for ordinal in ordinals:
            pod = by_ordinal.get(ordinal)
            if (
                pod is not None
                and (pod.get("status") or {}).get("phase") == "Failed"
                and not is_deleting(pod)
            ):
                self._delete(sts, pod)
                if monotonic:
                    return
                continue
            if pod is None:
                if current is not None and _at_current(sts, ordinal, start):
                    self._create(current[0], ordinal, current[1])
                else:
                    self._create(sts, ordinal, update_revision)
                if monotonic:
                    return
                continue
            if monotonic and not _healthy(pod):
                return  # "StatefulSet is waiting for Pod to be Running and Ready"
        # then the condemned, from the highest ordinal down; an unhealthy one waits unless it is the first
        # unhealthy pod (replicas first, by ordinal)
        ordered = [by_ordinal[o] for o in sorted(by_ordinal)] + condemned
        first_unhealthy = next((p for p in ordered if not _healthy(p)), None)
        for pod in reversed(condemned):
            if is_deleting(pod):
                if monotonic:
                    return
                continue
            if monotonic and not _healthy(pod) and pod is not first_unhealthy:
                return
            self._delete(sts, pod)
            if monotonic:
                return
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for ordinal in reversed(ordinals):
            if ordinal < start + partition:
                break
            pod = by_ordinal.get(ordinal)
            if pod is None:
                return  # created this pass (Parallel): the next pass sees it
            if (meta(pod).get("labels") or {}).get(REVISION_LABEL) != update_revision and not is_deleting(
                pod
            ):
                self._delete(sts, pod)
                return
            if not _healthy(pod):
                return

    def _create(self, sts: JSON, ordinal: int, revision: str) -> None:
        spec = sts.get("spec") or {}
        set_name = name_of(sts)
        pod_name = f"{set_name}-{ordinal}"
        template = copy.deepcopy(spec.get("template") or {})
        pod_spec: JSON = template.get("spec") or {}
        claims: list[tuple[str, JSON]] = []
        for claim_template in spec.get("volumeClaimTemplates") or []:
            volume = str(meta(claim_template).get("name", ""))
            claims.append((volume, claim_template))
        if claims:
            volumes = [
                v for v in pod_spec.get("volumes") or [] if v.get("name") not in {c[0] for c in claims}
            ]
            for volume, _tmpl in claims:
                volumes.append(
                    {"name": volume, "persistentVolumeClaim": {"claimName": f"{volume}-{pod_name}"}}
                )
            pod_spec["volumes"] = volumes
            for volume, claim_template in claims:
                if not self._create_claim(sts, claim_template, f"{volume}-{pod_name}", pod_name):
                    return  # no pod without its claims
        pod_spec["hostname"] = pod_name
        if spec.get("serviceName"):
            pod_spec["subdomain"] = spec["serviceName"]
        labels = {POD_NAME_LABEL: pod_name, POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: revision}
        try:
            self.store.create(
                "pods", pod_from_template(sts, template, pod_spec, labels=labels, name=pod_name)
            )
        except ApiError as error:
            if error.status in (404, 409) or is_namespace_terminating(error):
                raise
            post_event(self.store, self.clock, sts, reason="FailedCreate",
                       message=f"create Pod {pod_name} in StatefulSet {set_name} failed error: {error.message}",
                       component=COMPONENT, event_type="Warning")  # fmt: skip
            return
        post_event(self.store, self.clock, sts, reason="SuccessfulCreate",
                   message=f"create Pod {pod_name} in StatefulSet {set_name} successful",
                   component=COMPONENT)  # fmt: skip

    def _create_claim(self, sts: JSON, claim_template: JSON, claim_name: str, pod_name: str) -> bool:
        """getPersistentVolumeClaims/createPersistentVolumeClaims: the template's claim, labelled with the
        set's selector's matchLabels; a claim that exists is left as it is."""
        namespace = namespace_of(sts)
        try:
            self.store.get("persistentvolumeclaims", claim_name, namespace=namespace)
            return True
        except ApiError as error:
            if error.status != 404:
                raise
        spec = sts.get("spec") or {}
        template_meta = meta(claim_template)
        labels = {**(template_meta.get("labels") or {}),
                  **((spec.get("selector") or {}).get("matchLabels") or {})}  # fmt: skip
        claim_meta: JSON = {"name": claim_name, "namespace": namespace, "labels": labels}
        if template_meta.get("annotations"):
            claim_meta["annotations"] = dict(template_meta["annotations"])
        policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        if policy.get("whenDeleted") == "Delete":
            claim_meta["ownerReferences"] = [owner_reference(sts)]
        claim = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": claim_meta,
            "spec": copy.deepcopy(claim_template.get("spec") or {}),
        }
        set_name = name_of(sts)
        try:
            self.store.create("persistentvolumeclaims", claim)
        except ApiError as error:
            if error.status in (404, 409) or is_namespace_terminating(error):
                raise
            post_event(self.store, self.clock, sts, reason="FailedCreate",
                       message=f"create Claim {claim_name} for Pod {pod_name} in StatefulSet {set_name} failed "
                               f"error: {error.message}",
                       component=COMPONENT, event_type="Warning")  # fmt: skip
            return False
        post_event(self.store, self.clock, sts, reason="SuccessfulCreate",
                   message=f"create Claim {claim_name} Pod {pod_name} in StatefulSet {set_name} success",
                   component=COMPONENT)  # fmt: skip
        return True

    def _delete(self, sts: JSON, pod: JSON) -> None:
        self.store.delete("pods", name_of(pod), namespace=namespace_of(pod), uid=uid_of(pod))
        post_event(self.store, self.clock, sts, reason="SuccessfulDelete",
                   message=f"delete Pod {name_of(pod)} in StatefulSet {name_of(sts)} successful",
                   component=COMPONENT)  # fmt: skip

    def _write_status(
        self, sts: JSON, pods: list[JSON], update_revision: str, current_revision: str, replicas: int
    ) -> float | None:
        """updateStatefulSetStatus with the pods this pass began from (the next pass sees its writes)."""
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        now: datetime = self.clock.now()
        wake: float | None = None
        count = ready = available = current = updated = 0
        for pod in pods:
            count += 1
            if pod_ready(pod):
                ready += 1
                left = available_since(pod, min_ready, now)
                if left == 0:
                    available += 1
                elif left is not None:
                    wake = left if wake is None else min(wake, left)
            if not is_deleting(pod):
                revision = (meta(pod).get("labels") or {}).get(REVISION_LABEL)
                current += revision == current_revision
                updated += revision == update_revision
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") == "RollingUpdate" and updated == count == ready == replicas:
            current, current_revision = updated, update_revision  # completeRollingUpdate
        status: JSON = {
            "observedGeneration": int(meta(sts).get("generation", 1)),
            "replicas": count,
            "readyReplicas": ready or None,
            "currentReplicas": current or None,
            "updatedReplicas": updated or None,
            "availableReplicas": available,
            "currentRevision": current_revision,
            "updateRevision": update_revision,
            "collisionCount": int((sts.get("status") or {}).get("collisionCount") or 0),
        }
        existing = sts.get("status") or {}
        if any(existing.get(k) != v for k, v in status.items()):
            self.store.patch("statefulsets", name_of(sts), {"status": status}, namespace=namespace_of(sts),
                             subresource="status")  # fmt: skip
        return wake
