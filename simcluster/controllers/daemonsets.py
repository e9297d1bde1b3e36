"""The DaemonSet controller: one pod per node the pod template fits, as kube-controller-manager's daemon
controller (pkg/controller/daemon) keeps them.

A node should run the daemon pod when the template's `spec.nodeName` (if any), node selector and required
node affinity match it and it carries no NoSchedule/NoExecute taint the pod does not tolerate (the pod's
tolerations plus the ones the controller adds to every daemon pod: not-ready and unreachable NoExecute,
the pressure and unschedulable NoSchedule ones, network-unavailable for a host-network pod). A pod already
on a node whose only untolerated taints are NoSchedule keeps running there. The pod is created with a
required node affinity `matchFields metadata.name In [node]` (the scheduler places it), the labels
`controller-revision-hash` and `pod-template-generation`, and a controlling owner reference;
pods on nodes that no longer fit, failed pods and duplicates are deleted. A RollingUpdate deletes old pods
while at most `maxUnavailable` nodes lack an available daemon pod; with `maxSurge` the new pod starts beside
the old one on at most that many nodes at once, and the old one goes once the new one is available. Events are SuccessfulCreate / SuccessfulDelete
(`Created pod: <name>`), as the pod control records them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from dra.disruption import BudgetError, scaled
from dra.nodefit import affinity_refuses, node_taints
from dra.selection import SelectorError
from dra.taints import BLOCKING_EFFECTS, NO_EXECUTE, parse_time, untolerated
from simcluster.controllers.base import Clock
from simcluster.controllers.common import (
    controlled_by,
    controller_of,
    creation_time,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    pod_from_template,
    post_event,
    read_all,
    uid_of,
)
from simcluster.controllers.deployments import template_hash
from simcluster.controllers.history import HashCollision, bump_collisions, record, trim
from simcluster.controllers.owners import CREATE_BACKOFF
from simcluster.defaulting import TEMPLATE_GENERATION
from simcluster.errors import ApiError, is_namespace_terminating
from simcluster.store import Store

JSON = dict[str, Any]
WATCHES = frozenset({"daemonsets", "pods", "nodes", "controllerrevisions"})
COMPONENT = "daemonset-controller"
REVISION_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"

#: the tolerations upstream's AddOrUpdateDaemonPodTolerations gives every daemon pod
DAEMON_TOLERATIONS: tuple[JSON, ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
NETWORK_TOLERATION: JSON = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def daemon_pod_spec(template_spec: Mapping[str, Any]) -> JSON:
    """The template's pod spec with the daemon tolerations added (AddOrUpdateDaemonPodTolerations: one of
    the same key, operator and effect is replaced)."""
    spec = copy.deepcopy(dict(template_spec))
    tolerations = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    extra = list(DAEMON_TOLERATIONS) + ([NETWORK_TOLERATION] if spec.get("hostNetwork") else [])
    for added in extra:
        same = (added["key"], added["operator"], added["effect"])
        tolerations = [t for t in tolerations if (t.get("key"), t.get("operator"), t.get("effect")) != same]
        tolerations.append(dict(added))
    spec["tolerations"] = tolerations
    return spec


def should_run(spec: Mapping[str, Any], node: Mapping[str, Any]) -> tuple[bool, bool]:
    """upstream's nodeShouldRunDaemonPod: (should run a pod there, should keep a pod running there)."""
    wanted = spec.get("nodeName")
    if wanted and wanted != name_of(node):
        return False, False
    pod = {"spec": spec}
    try:
        if affinity_refuses(pod, node):
            return False, False
    except SelectorError:
        return False, False
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if isinstance(t, dict)]
    if not taints:
        return True, True
    parsed = node_taints(node)
    tolerations = spec.get("tolerations") or []
    if not untolerated(parsed, tolerations, effects=BLOCKING_EFFECTS):
        return True, True
    return False, not untolerated(parsed, tolerations, effects=frozenset({NO_EXECUTE}))


def pod_ready(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or []
    )


def available_since(pod: Mapping[str, Any], min_ready: int, now: datetime) -> float | None:
    """0 when the pod is available now (ready for `min_ready` seconds), the seconds until it will be, or
    None when it is not ready."""
    if not pod_ready(pod):
        return None
    if min_ready <= 0:
        return 0.0
    ready: Mapping[str, Any] = next(
        (c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {}
    )
    since = parse_time(ready.get("lastTransitionTime"))
    if since is None:
        return 0.0
    return max(0.0, (since + timedelta(seconds=min_ready) - now).total_seconds())


def target_node(pod: Mapping[str, Any]) -> str:
    """The node a daemon pod is for: its nodeName, or before it is scheduled the name its affinity asks."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {})  # fmt: skip
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return str(field["values"][0])
    return ""


def with_node_affinity(spec: JSON, node: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes one term asking for the
    node by name; preferred terms and the other affinities are kept."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}


class DaemonSetController:
    def __init__(self, store: Store, *, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        #: DaemonSet uid → (not before, the next wait) after its pod was refused
        self._backoff: dict[str, tuple[datetime, float]] = {}

    @staticmethod
    def wants(plural: str, obj: JSON) -> bool:
        """A pod matters only when a DaemonSet controls it (upstream's pod handlers look up its controller
        the same way): a burst of another owner's pods wakes nothing here."""
        return plural != "pods" or controlled_by(obj, "DaemonSet")

    def reconcile(self) -> float | None:
        daemonsets = read_all(self.store, "daemonsets")
        if not daemonsets:
            self._backoff.clear()
            return None
        nodes = read_all(self.store, "nodes")
        owned: dict[str, list[JSON]] = {}
        for pod in read_all(self.store, "pods"):
            ref = controller_of(pod)
            if ref and ref.get("kind") == "DaemonSet":
                owned.setdefault(str(ref.get("uid")), []).append(pod)
        now = self.clock.now()
        waits: list[float] = []
        live = set()
        for ds in daemonsets:
            live.add(uid_of(ds))
            waiting = self._backoff.get(uid_of(ds))
            if is_deleting(ds):
                continue
            try:
                wait = self._sync(
                    ds, nodes, owned.get(uid_of(ds), []), blocked=waiting is not None and waiting[0] > now
                )
            except ApiError as error:
                if error.status not in (404, 409) and not is_namespace_terminating(error):
                    raise
                wait = 0.05 if error.status == 409 else None
            if wait is not None:
                waits.append(wait)
        for uid in set(self._backoff) - live:
            del self._backoff[uid]
        waits += [(until - now).total_seconds() for until, _next in self._backoff.values()]
        return max(0.0, min(waits)) if waits else None

    def _sync(self, ds: JSON, nodes: list[JSON], pods: list[JSON], *, blocked: bool) -> float | None:
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        digest = template_hash(template, int((ds.get("status") or {}).get("collisionCount") or 0))
        # constructHistory: the current template's revision, labelled as its pods are
        revision = f"{name_of(ds)}-{digest}"
        try:
            record(self.store, ds, revision, {**((template.get("metadata") or {}).get("labels") or {}),
                                              REVISION_LABEL: digest}, meta(ds).get("annotations"))  # fmt: skip
        except HashCollision:
            bump_collisions(self.store, "daemonsets", ds)
            return 0.0
        generation = str((meta(ds).get("annotations") or {}).get(TEMPLATE_GENERATION, "1"))
        pod_spec = daemon_pod_spec(template.get("spec") or {})
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = self.clock.now()
        by_node: dict[str, list[JSON]] = {}
        for pod in sorted(pods, key=creation_time):
            by_node.setdefault(target_node(pod), []).append(pod)
        node_names = {name_of(n) for n in nodes}
        create: list[str] = []
        delete: list[JSON] = []
        running_on: dict[str, list[JSON]] = {}
        desired: list[str] = []
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("type", "RollingUpdate") == "RollingUpdate"
        surge = _surge(strategy, len(nodes)) if rolling else 0
        for node in nodes:
            name = name_of(node)
            run, keep = should_run(pod_spec, node)
            on_node = by_node.get(name, [])
            if run:
                desired.append(name)
            if run and not on_node:
                create.append(name)
            elif keep:
                alive = [p for p in on_node if not is_deleting(p)]
                failed = [p for p in alive if (p.get("status") or {}).get("phase") == "Failed"]
                delete += failed
                alive = [p for p in alive if p not in failed]
                if len(alive) > 1:
                    kept = self._kept(alive, digest, generation, min_ready, now, surge=surge > 0)
                    delete += [p for p in alive if p not in kept]
                    alive = kept
                running_on[name] = alive
            elif on_node:
                delete += [p for p in on_node if not is_deleting(p)]
        # pods for nodes that are gone
        for target, lost in by_node.items():
            if target not in node_names:
                delete += [p for p in lost if not is_deleting(p)]
        wake: float | None = None
        if rolling and not delete and surge:
            olds, news = self._surge_update(
                _surge(strategy, len(desired)), desired, running_on, digest, generation, min_ready, now
            )
            delete += olds
            create += news
        elif rolling and not delete:
            delete += self._rolling_update(strategy, desired, running_on, digest, generation, min_ready, now)
        for pod in delete:
            self.store.delete("pods", name_of(pod), namespace=namespace_of(pod), uid=uid_of(pod))
            post_event(self.store, self.clock, ds, reason="SuccessfulDelete", message=f"Deleted pod: {name_of(pod)}",
                       component=COMPONENT)  # fmt: skip
        if not blocked:
            for name in create:
                if not self._create(ds, template, pod_spec, name, digest, generation):
                    break
            else:
                self._backoff.pop(uid_of(ds), None)
        # cleanupHistory: revisions past the limit that no pod runs
        hashes = {(meta(p).get("labels") or {}).get(REVISION_LABEL) for p in pods}
        trim(self.store, ds, revision, {f"{name_of(ds)}-{h}" for h in hashes if h}, count_live=True)
        # status (updateDaemonSetStatus)
        scheduled = ready = available = updated = misscheduled = 0
        for node in nodes:
            name = name_of(node)
            on_node = [p for p in by_node.get(name, []) if not is_deleting(p)]
            if name not in desired:
                misscheduled += bool(on_node)
                continue
            if not on_node:
                continue
            scheduled += 1
            pod = on_node[0]
            if pod_ready(pod):
                ready += 1
                left = available_since(pod, min_ready, now)
                if left == 0:
                    available += 1
                elif left is not None:
                    wake = left if wake is None else min(wake, left)
            if _updated(pod, digest, generation):
                updated += 1
        status = {
            "observedGeneration": int(meta(ds).get("generation", 1)),
            "desiredNumberScheduled": len(desired),
            "currentNumberScheduled": scheduled,
            "numberMisscheduled": misscheduled,
            "numberReady": ready,
            "numberAvailable": available or None,
            "updatedNumberScheduled": updated or None,
            "numberUnavailable": max(0, len(desired) - available) or None,
        }
        current = ds.get("status") or {}
        if any(current.get(k) != v for k, v in status.items()):
            self.store.patch("daemonsets", name_of(ds), {"status": status}, namespace=namespace_of(ds),
                             subresource="status")  # fmt: skip
        return wake

    @staticmethod
    def _rolling_update(
        strategy: JSON,
        desired: list[str],
        running_on: dict[str, list[JSON]],
        digest: str,
        generation: str,
        min_ready: int,
        now: datetime,
    ) -> list[JSON]:
        """rollingUpdate with maxSurge 0: old pods that are not available go at once; available ones while
        fewer than maxUnavailable of the nodes that should run a pod lack an available one."""
        try:
            budget = scaled((strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1), len(desired),
                            round_up=True)  # fmt: skip
        except BudgetError:
            budget = 1
        budget = max(budget, 1) if desired else 0
        unavailable = 0
        old_available: list[JSON] = []
        out: list[JSON] = []
        for name in desired:
            alive = running_on.get(name) or []
            if not alive:
                unavailable += 1
                continue
            pod = alive[0]
            ok = available_since(pod, min_ready, now) == 0
            if not ok:
                unavailable += 1
            if _updated(pod, digest, generation):
                continue
            if ok:
                old_available.append(pod)
            else:
                out.append(pod)
        room = budget - unavailable
        out += old_available[: max(0, room)]
        return out

    @staticmethod
    def _kept(
        alive: list[JSON], digest: str, generation: str, min_ready: int, now: datetime, *, surge: bool
    ) -> list[JSON]:
        """podsShouldBeOnNode's duplicates: without surge the oldest pod stays; with it, the oldest updated pod
        and, while that one is not available and it is, the oldest old pod."""
        if not surge:
            return alive[:1]  # `alive` is oldest first
        updated = [p for p in alive if _updated(p, digest, generation)]
        old = [p for p in alive if not _updated(p, digest, generation)]
        if not updated:
            return old[:1]
        if (
            old
            and available_since(updated[0], min_ready, now) != 0
            and available_since(old[0], min_ready, now) == 0
        ):
            return [old[0], updated[0]]
        return updated[:1]

    @staticmethod
    def _surge_update(
        surge: int,
        desired: list[str],
        running_on: dict[str, list[JSON]],
        digest: str,
        generation: str,
        min_ready: int,
        now: datetime,
    ) -> tuple[list[JSON], list[str]]:
        """rollingUpdate with maxSurge: a node whose old pod is not available gets its new pod at once, at
        most `maxSurge` others one beside the old pod; an old pod goes once the new one beside it is available.
        Returns (pods to delete, nodes to create a pod on)."""
        delete: list[JSON] = []
        at_once: list[str] = []
        candidates: list[str] = []
        surging = 0
        for name in desired:
            alive = running_on.get(name) or []
            new = next((p for p in alive if _updated(p, digest, generation)), None)
            old = next((p for p in alive if not _updated(p, digest, generation)), None)
            if old is None:
                continue
            if new is None:
                (candidates if available_since(old, min_ready, now) == 0 else at_once).append(name)
            elif available_since(new, min_ready, now) == 0:
                delete.append(old)
            else:
                surging += 1
        return delete, at_once + candidates[: max(0, surge - surging)]

    def _create(
        self, ds: JSON, template: JSON, pod_spec: JSON, node: str, digest: str, generation: str
    ) -> bool:
        spec = copy.deepcopy(pod_spec)
        with_node_affinity(spec, node)
        labels = {GENERATION_LABEL: generation, REVISION_LABEL: digest}
        try:
            pod = self.store.create("pods", pod_from_template(ds, template, spec, labels=labels))
        except ApiError as error:
            if error.status in (404, 409) or is_namespace_terminating(error):
                raise
            post_event(self.store, self.clock, ds, reason="FailedCreate", message=f"Error creating: {error.message}",
                       component=COMPONENT, event_type="Warning")  # fmt: skip
            uid = uid_of(ds)
            wait = self._backoff[uid][1] if uid in self._backoff else CREATE_BACKOFF[0]
            self._backoff[uid] = (
                self.clock.now() + timedelta(seconds=wait),
                min(wait * 2, CREATE_BACKOFF[1]),
            )
            return False
        post_event(self.store, self.clock, ds, reason="SuccessfulCreate", message=f"Created pod: {name_of(pod)}",
                   component=COMPONENT)  # fmt: skip
        return True


def _surge(strategy: Mapping[str, Any], nodes: int) -> int:
    try:
        return scaled((strategy.get("rollingUpdate") or {}).get("maxSurge", 0) or 0, nodes, round_up=True)
    except BudgetError:
        return 0


def _updated(pod: Mapping[str, Any], digest: str, generation: str) -> bool:
    """IsPodUpdated: the pod's template generation or revision hash is the DaemonSet's current one."""
    labels = meta(pod).get("labels") or {}
    return labels.get(GENERATION_LABEL) == generation or labels.get(REVISION_LABEL) == digest
