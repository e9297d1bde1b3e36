"""The Deployment controller: one ReplicaSet per pod template, rolled out as upstream's does.

The new ReplicaSet is `<deployment>-<pod-template-hash>` (the hash of the template, added to its labels and
selector) with the revision annotations; a RollingUpdate grows it within `replicas + maxSurge` and shrinks
the old ones while `replicas - maxUnavailable` pods stay available (Recreate: old ones to zero first).
Old ReplicaSets beyond `revisionHistoryLimit` are deleted. A rollback finds the old ReplicaSet of its
template, which takes the next revision. A paused Deployment creates no ReplicaSet and rolls nothing, but
follows `spec.replicas` and is observed (Progressing Unknown, DeploymentPaused). Status and the
Available/Progressing conditions follow the ReplicaSets; each change of a ReplicaSet's size is a
ScalingReplicaSet event on the Deployment (`Scaled up replica set <rs> from 0 to 2`). A Deployment being deleted is left alone: the garbage collector (`garbage.py`)
deletes its ReplicaSets, and their pods, through their ownerReferences.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from dra.disruption import scaled
from simcluster.controllers.base import Clock, format_time
from simcluster.controllers.common import (
    controller_of,
    creation_time,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    owner_reference,
    post_event,
    read_all,
    uid_of,
)
from simcluster.controllers.disruption import SyncError
from simcluster.errors import ApiError, is_namespace_terminating
from simcluster.store import Store

JSON = dict[str, Any]
# Not pods: the controller reads its ReplicaSets' status, which the ReplicaSet controller keeps from them.
WATCHES = frozenset({"deployments", "replicasets"})
HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
_MAX_REVISION_HISTORY = 2000
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: JSON, collisions: int = 0) -> str:
    """A short stable hash of a pod template (fnv-1a 32, encoded with kube's safe alphabet)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode() + str(collisions).encode()
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHABET[ord(c) % len(_ALPHABET)] for c in str(value))


def _revision(obj: JSON) -> int:
    try:
        return int((meta(obj).get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


class DeploymentController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock

    def wants(self, plural: str, obj: JSON) -> bool:
        """ReplicaSets matter only while some Deployment exists (one created wakes the controller, which
        then reads them all): a bare ReplicaSet scaling through a burst wakes nothing here."""
        return plural == "deployments" or self.store.count("deployments") > 0

    def reconcile(self) -> float | None:
        deployments = read_all(self.store, "deployments")
        # copies: a sync updates its ReplicaSets in place as it scales them
        replicasets = [copy.deepcopy(rs) for rs in read_all(self.store, "replicasets")]
        retry = False
        owned: dict[str, list[JSON]] = {}
        for rs in replicasets:
            ref = controller_of(rs)
            if ref and ref.get("kind") == "Deployment":
                owned.setdefault(str(ref.get("uid")), []).append(rs)
        for deployment in deployments:
            if is_deleting(deployment):
                continue
            try:
                self._sync(deployment, owned.get(uid_of(deployment), []))
            except ApiError as error:
                if error.status not in (404, 409, 422) and not is_namespace_terminating(error):
                    raise
                retry = retry or error.status == 409
            except SyncError:
                continue
        return 0.05 if retry else None

    def _sync(self, deployment: JSON, owned: list[JSON]) -> None:
        spec = deployment.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        template = copy.deepcopy(spec.get("template") or {})
        digest = template_hash(template)
        new_rs = next((rs for rs in owned if (meta(rs).get("labels") or {}).get(HASH_LABEL) == digest), None)
        olds = sorted((rs for rs in owned if rs is not new_rs), key=creation_time)
        strategy = spec.get("strategy") or {}
        rolling = strategy.get("type", "RollingUpdate") != "Recreate"
        surge, unavailable = 0, 0
        if rolling:
            params = strategy.get("rollingUpdate") or {}
            surge = scaled(params.get("maxSurge", "25%"), replicas, round_up=True)
            unavailable = scaled(params.get("maxUnavailable", "25%"), replicas, round_up=False)
            if surge == 0 and unavailable == 0:
                unavailable = 1
        old_total = sum(_spec_replicas(rs) for rs in olds)
        paused = bool(spec.get("paused"))
        if new_rs is not None:
            self._sync_revision(new_rs, olds)
        if paused:
            self._scale_paused(deployment, new_rs, olds, replicas, surge)
        elif new_rs is None:
            if rolling:
                start = min(replicas, max(0, replicas + surge - old_total))
            else:
                start = replicas if old_total == 0 and not any(_status(rs, "replicas") for rs in olds) else 0
            new_rs = self._create_replicaset(deployment, template, digest, start, olds, replicas + surge)
            owned = [*owned, new_rs]
        else:
            self._scale_new(deployment, new_rs, olds, replicas, surge, rolling)
            self._scale_olds(deployment, olds, new_rs, replicas, unavailable, rolling)
        self._prune_history(deployment, olds)
        self._write_status(deployment, new_rs, owned, replicas, unavailable, paused=paused)

    def _sync_revision(self, new_rs: JSON, olds: list[JSON]) -> None:
        """The ReplicaSet of the current template takes the next revision when an older one is newer than it
        (a rollback to it, `kubectl rollout undo`); the revisions it had are kept in revision-history, as
        upstream's SetNewReplicaSetAnnotations keeps them (at most 2,000 characters, oldest dropped)."""
        revision = max([_revision(rs) for rs in olds] + [0]) + 1
        current = _revision(new_rs)
        if current >= revision:
            return
        annotations = {REVISION: str(revision)}
        had = (meta(new_rs).get("annotations") or {}).get(REVISION)
        if had is not None:
            history = [
                r
                for r in str((meta(new_rs).get("annotations") or {}).get(REVISION_HISTORY, "")).split(",")
                if r
            ]
            total = len(",".join(history)) + len(had) + 1 if history else len(had)
            while history and total > _MAX_REVISION_HISTORY:
                total -= len(history.pop(0)) + 1
            if total <= _MAX_REVISION_HISTORY:
                annotations[REVISION_HISTORY] = ",".join([*history, had])
        updated = self.store.patch("replicasets", name_of(new_rs), {"metadata": {"annotations": annotations}},
                                   namespace=namespace_of(new_rs))  # fmt: skip
        new_rs.clear()
        new_rs.update(updated)

    def _scale_paused(
        self, deployment: JSON, new_rs: JSON | None, olds: list[JSON], replicas: int, surge: int
    ) -> None:
        """A paused Deployment still follows `spec.replicas` where one ReplicaSet holds its pods (or none
        does: then the newest), as upstream's `scale` does before any proportional scaling, which this
        simulation leaves out."""
        every = ([new_rs] if new_rs is not None else []) + olds
        active = [rs for rs in every if _spec_replicas(rs) > 0]
        if len(active) == 1:
            target = active[0]
        elif not active and every:
            target = new_rs if new_rs is not None else max(olds, key=creation_time)
        else:
            return
        self._set_replicas(
            deployment, target, replicas, {DESIRED: str(replicas), MAX_REPLICAS: str(replicas + surge)}
        )

    def _scale_new(
        self, deployment: JSON, new_rs: JSON, olds: list[JSON], replicas: int, surge: int, rolling: bool
    ) -> None:
        current = _spec_replicas(new_rs)
        if rolling:
            if current > replicas:
                target = replicas
            else:
                room = replicas + surge - current - sum(_spec_replicas(rs) for rs in olds)
                target = min(replicas, current + max(0, room))
        else:
            olds_running = any(_spec_replicas(rs) or _status(rs, "replicas") for rs in olds)
            target = current if olds_running else replicas
        annotations = {
            DESIRED: str(replicas),
            MAX_REPLICAS: str(replicas + surge),
            REVISION: str(_revision(new_rs)),
        }
        self._set_replicas(deployment, new_rs, target, annotations)

    def _scale_olds(
        self, deployment: JSON, olds: list[JSON], new_rs: JSON, replicas: int, unavailable: int, rolling: bool
    ) -> None:
        if not rolling:
            for rs in olds:
                self._set_replicas(deployment, rs, 0, None)
            return
        all_pods = _spec_replicas(new_rs) + sum(_spec_replicas(rs) for rs in olds)
        new_unavailable = max(0, _spec_replicas(new_rs) - _status(new_rs, "availableReplicas"))
        budget = all_pods - (replicas - unavailable) - new_unavailable
        for rs in olds:  # first the replicas that are not available anyway
            unhealthy = max(0, _spec_replicas(rs) - _status(rs, "availableReplicas"))
            if unhealthy and budget > 0:
                cut = min(unhealthy, budget)
                self._set_replicas(deployment, rs, _spec_replicas(rs) - cut, None)
                budget -= cut
        for rs in olds:
            if budget <= 0:
                break
            left = _spec_replicas(rs)
            cut = min(left, budget)
            if cut > 0:
                self._set_replicas(deployment, rs, left - cut, None)
                budget -= cut

    def _create_replicaset(self, deployment: JSON, template: JSON, digest: str, replicas: int, olds: list[JSON],
                           max_replicas: int) -> JSON:  # fmt: skip
        selector = copy.deepcopy((deployment.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = digest
        template_meta = template.setdefault("metadata", {})
        template_meta.setdefault("labels", {})[HASH_LABEL] = digest
        revision = max([_revision(rs) for rs in olds] + [0]) + 1
        labels = dict(template_meta.get("labels") or {})
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{name_of(deployment)}-{digest}",
                "namespace": namespace_of(deployment),
                "labels": labels,
                "annotations": {DESIRED: str((deployment.get("spec") or {}).get("replicas", 1)),
                                MAX_REPLICAS: str(max_replicas), REVISION: str(revision)},
                "ownerReferences": [owner_reference(deployment)],
            },
            "spec": {"replicas": replicas, "minReadySeconds": int((deployment.get("spec") or {}).get("minReadySeconds", 0)),
                     "selector": selector, "template": template},
        }  # fmt: skip
        created = self.store.create("replicasets", rs)
        if replicas > 0:
            self._scaled(deployment, created, 0, replicas)
        return created

    def _set_replicas(
        self, deployment: JSON, rs: JSON, replicas: int, annotations: dict[str, str] | None
    ) -> None:
        current = meta(rs).get("annotations") or {}
        changes_annotations = annotations is not None and any(
            current.get(k) != v for k, v in annotations.items()
        )
        if _spec_replicas(rs) == replicas and not changes_annotations:
            return
        patch: JSON = {"spec": {"replicas": replicas}}
        if annotations is not None and changes_annotations:
            patch["metadata"] = {"annotations": annotations}
        updated = self.store.patch("replicasets", name_of(rs), patch, namespace=namespace_of(rs))
        before = _spec_replicas(rs)
        rs.clear()
        rs.update(updated)
        if before != replicas:
            self._scaled(deployment, rs, before, replicas)

    def _scaled(self, deployment: JSON, rs: JSON, before: int, after: int) -> None:
        """The deployment controller's ScalingReplicaSet event, as `kubectl describe deployment` lists it."""
        way = "up" if after > before else "down"
        post_event(self.store, self.clock, deployment, reason="ScalingReplicaSet",
                   message=f"Scaled {way} replica set {name_of(rs)} from {before} to {after}",
                   component="deployment-controller")  # fmt: skip

    def _prune_history(self, deployment: JSON, olds: list[JSON]) -> None:
        limit = int((deployment.get("spec") or {}).get("revisionHistoryLimit", 10))
        idle = [
            rs
            for rs in olds
            if _spec_replicas(rs) == 0 and _status(rs, "replicas") == 0 and not is_deleting(rs)
        ]
        for rs in sorted(idle, key=_revision)[: max(0, len(idle) - limit)]:
            self.store.delete("replicasets", name_of(rs), namespace=namespace_of(rs), uid=uid_of(rs))

    def _write_status(
        self,
        deployment: JSON,
        new_rs: JSON | None,
        owned: list[JSON],
        replicas: int,
        unavailable: int,
        *,
        paused: bool,
    ) -> None:
        now = format_time(self.clock.now())
        current = deployment.get("status") or {}
        total = sum(_status(rs, "replicas") for rs in owned)
        available = sum(_status(rs, "availableReplicas") for rs in owned)
        updated = _status(new_rs, "replicas") if new_rs is not None else 0
        status: JSON = {
            "observedGeneration": int(meta(deployment).get("generation", 1)),
            "replicas": total,
            "updatedReplicas": updated,
            "readyReplicas": sum(_status(rs, "readyReplicas") for rs in owned),
            "availableReplicas": available,
        }
        status = {k: v for k, v in status.items() if v or k == "observedGeneration"}
        missing = max(0, sum(_spec_replicas(rs) for rs in owned) - available)
        if missing:
            status["unavailableReplicas"] = missing
        conditions = {c.get("type"): c for c in current.get("conditions") or []}
        if available >= replicas - unavailable:
            avail = ("True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
        else:
            avail = ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
        rs_name = name_of(new_rs) if new_rs is not None else ""
        complete = updated == replicas and total == replicas and available >= replicas
        if paused:  # checkPausedConditions; a resumed rollout reports its progress again at once
            progress = ("Unknown", "DeploymentPaused", "Deployment is paused")
        elif complete:
            progress = (
                "True",
                "NewReplicaSetAvailable",
                f'ReplicaSet "{rs_name}" has successfully progressed.',
            )
        else:
            progress = ("True", "ReplicaSetUpdated", f'ReplicaSet "{rs_name}" is progressing.')
        status["conditions"] = [
            _condition(conditions.get("Available"), "Available", avail, now),
            _condition(conditions.get("Progressing"), "Progressing", progress, now),
        ]
        revision = str(_revision(new_rs)) if new_rs is not None else None
        if revision is not None and (meta(deployment).get("annotations") or {}).get(REVISION) != revision:
            self.store.patch("deployments", name_of(deployment), {"metadata": {"annotations": {REVISION: revision}}},
                             namespace=namespace_of(deployment))  # fmt: skip
        if _same_status(current, status):
            return
        # A count that fell to zero is left out (omitempty): the merge patch must remove it, not keep the old one.
        gone = {k: None for k in current if k not in status and k != "collisionCount"}
        self.store.patch("deployments", name_of(deployment), {"status": {**status, **gone}},
                         namespace=namespace_of(deployment), subresource="status")  # fmt: skip


def _condition(existing: JSON | None, kind: str, value: tuple[str, str, str], now: str) -> JSON:
    status, reason, message = value
    if existing and (existing.get("status"), existing.get("reason"), existing.get("message")) == value:
        return dict(existing)
    transition = existing.get("lastTransitionTime") if existing and existing.get("status") == status else now
    return {"type": kind, "status": status, "lastUpdateTime": now, "lastTransitionTime": transition or now,
            "reason": reason, "message": message}  # fmt: skip


def _same_status(current: JSON, wanted: JSON) -> bool:
    return all(current.get(k) == v for k, v in wanted.items()) and set(current) - {"collisionCount"} <= set(
        wanted
    )


def _spec_replicas(rs: JSON) -> int:
    return int((rs.get("spec") or {}).get("replicas", 1))


def _status(rs: JSON, key: str) -> int:
    return int((rs.get("status") or {}).get(key) or 0)
