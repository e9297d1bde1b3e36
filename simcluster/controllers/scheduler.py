"""The simulated kube-scheduler: claims from templates and for extended resources, DRA allocation with
`dra.allocator`, reservation, binding, and a Running pod.

Each pass takes every pending pod in queue order, kube-scheduler's PrioritySort: `spec.priority` first, then
the order the pods arrived in the queue (pods first seen in one pass arrive by creation time, then by
resourceVersion, the store's creation order when nothing touched them since); a pod that waits keeps its
place (kube-scheduler's backoff and re-queue times are not modelled). As kube-scheduler does, it filters
nodes from a rotating start until percentageOfNodesToScore's number of them fit (adaptive: 50 % − nodes/125,
at least 5 % and 100 nodes; every node in a cluster under 100), scores those
(`simcluster.controllers.scoring`: LeastAllocated, preferred node affinity, PreferNoSchedule taints) and
binds to the best; ties go to the rotation, which then moves past the chosen node. The node filters are
cached per pod shape and node for the pass (forgotten for a node when a pod is bound there);
DynamicResources' Filter (the allocator) runs on the scored nodes best first, so only the winner's claims
are usually allocated (when no node of a sample can allocate them, the next sample is taken). A pod joining
claims that are allocated already (their allocation decides the node) takes the first node that fits in the
rotation, most preferred first; when no node fits, that pass over every node gives the reasons. The DRA
steps follow the scheduler plugin (dra-api.md §7.8, §9): generated claims get the pod-claim-name annotation
and an owner reference; the extended-resource claim is built per node and created only when a node fits;
allocated claims get the delete-protection finalizer, `status.allocation` and a `reservedFor` entry before
the pod is bound. A pod that fits nowhere stays Pending with `PodScheduled=False`, reason `Unschedulable`,
and is retried whenever slices, claims, classes, rules, nodes or pods change.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from dra.allocator import DEFAULT_FEATURES, AllocatedState, AllocationError, Allocator
from dra.extended import (
    ExtendedRequest,
    count_of,
    device_plugin_capacity,
    extended_claim,
    extended_requests,
    extended_resources,
    generated_claim_prefix,
    pod_device_plugin_use,
    pod_extended_counts,
    served_by_device_plugin,
)
from dra.node_allocatable import claim_statuses
from dra.nodefit import UNTOLERATED_TAINT, node_refusal
from dra.objects import is_extended_resource_claim
from dra.selection import SelectorError, node_selector_matches
from dra.taints import RuleIndex
from simcluster.controllers.base import KUBE_CONTROLLER_MANAGER, KUBELET, Clock, format_time
from simcluster.controllers.common import (
    DELETE_PROTECTION,
    POD_CLAIM_NAME,
    bind_pod,
    creation_time,
    events_after,
    is_deleting,
    is_terminal,
    meta,
    name_of,
    namespace_of,
    owner_reference,
    pod_generation,
    pod_reference,
    post_containers_started,
    post_event,
    read_all,
    reserved_for,
    set_condition,
    uid_of,
)
from simcluster.controllers.eviction import evicting_now, published_devices
from simcluster.controllers.nodes import node_ready
from simcluster.controllers.scoring import (
    WEIGHT_FIT,
    WEIGHT_NODE_AFFINITY,
    WEIGHT_TAINT_TOLERATION,
    feasible_nodes_to_find,
    least_allocated,
    node_allocatable,
    normalize,
    pod_requests,
    prefer_no_schedule_taints,
    preference_score,
    preferred_terms,
    untolerated_preferences,
)
from simcluster.errors import ApiError, is_namespace_terminating
from simcluster.jsondata import clone
from simcluster.store import Store, writing_as

log = logging.getLogger("simcluster.scheduler")

JSON = dict[str, Any]
Allocate = Callable[..., list[JSON] | None]

COMPONENT = "default-scheduler"
WATCHES = frozenset(
    {
        "pods",
        "resourceclaims",
        "resourceclaimtemplates",
        "resourceslices",
        "deviceclasses",
        "devicetaintrules",
        "nodes",
        "podgroups",
    }
)
PODGROUP_API_GROUP = "scheduling.k8s.io"


#: kube-scheduler's ErrNoNodesAvailable: the whole message when the cluster has no node at all
NO_NODES = "no nodes available to schedule pods"
TOO_MANY_PODS = "Too many pods"
INSUFFICIENT = "Insufficient "


class Unschedulable(Exception):
    """The pod cannot be scheduled now; the message is what `PodScheduled` shows."""


class _Claims(dict[tuple[str, str], JSON]):
    """The pass's claims by (namespace, name), remembering which keys the pass wrote since last asked, so
    the allocator's state follows the pass's own allocations without diffing every claim per pod."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.touched: set[tuple[str, str]] = set()

    def __setitem__(self, key: tuple[str, str], value: JSON) -> None:
        self.touched.add(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: tuple[str, str]) -> None:
        self.touched.add(key)
        super().__delitem__(key)


@dataclass
class _World:
    """What one pass sees; claims are updated in place as the pass allocates."""

    nodes: list[JSON]
    classes: list[JSON]
    slices: list[JSON]
    rules: list[JSON]
    templates: dict[tuple[str, str], JSON]
    claims: _Claims
    pods_per_node: Counter[str] = field(default_factory=Counter)
    #: every pod the pass read; `on_node` indexes the bound ones (for preemption's victims, built on demand)
    pods: list[JSON] = field(default_factory=list)
    # (node, extended resource) → devices of a device plugin the node's bound pods use
    plugin_used: Counter[tuple[str, str]] = field(default_factory=Counter)
    podgroups: dict[tuple[str, str], JSON] = field(default_factory=dict)
    # (slices, classes, rules) as (count, newest resourceVersion): the allocator is rebuilt when it changes
    signature: tuple[tuple[int, int], ...] = ()
    # pod uid → keys of the claims it owns (generated and extended-resource claims)
    owned: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # per node (by index): (milli-cpu, memory) the bound pods request, as the scorer counts them
    requested: list[tuple[int, int]] = field(default_factory=list)
    # pod shape → what the pass knows of every node for pods of that shape (see _Shape)
    shapes: dict[str, _Shape] = field(default_factory=dict)
    _allocatable: list[tuple[int, int] | None] = field(default_factory=list)
    _prefer_taints: list[list[Any]] | None = None
    _node_index: dict[str, int] | None = None
    _on_node: dict[str, list[JSON]] | None = None

    def on_node(self, node: str) -> list[JSON]:
        """The unfinished pods bound to `node`, those this pass bound included."""
        if self._on_node is None:
            self._on_node = {}
            for pod in self.pods:
                bound_to = (pod.get("spec") or {}).get("nodeName")
                if bound_to and not is_terminal(pod):
                    self._on_node.setdefault(str(bound_to), []).append(pod)
        return self._on_node.get(node, [])

    def placed(self, pod: JSON, node: str) -> None:
        if self._on_node is not None:
            self._on_node.setdefault(node, []).append(pod)

    @property
    def node_index(self) -> dict[str, int]:
        if self._node_index is None:
            self._node_index = {name_of(n): i for i, n in enumerate(self.nodes)}
        return self._node_index

    def allocatable(self, i: int) -> tuple[int, int]:
        if not self._allocatable:
            self._allocatable = [None] * len(self.nodes)
        value = self._allocatable[i]
        if value is None:
            value = self._allocatable[i] = node_allocatable(self.nodes[i])
        return value

    @property
    def prefer_taints(self) -> list[list[Any]]:
        """Every node's PreferNoSchedule taints (TaintToleration scores only where some node has one)."""
        if self._prefer_taints is None:
            self._prefer_taints = [prefer_no_schedule_taints(n) for n in self.nodes]
        return self._prefer_taints

    def bound(self, i: int, requests: tuple[int, int]) -> None:
        """A pod was bound to node i: what the pass knows of that node is out of date."""
        cpu, memory = self.requested[i]
        self.requested[i] = (cpu + requests[0], memory + requests[1])
        for shape in self.shapes.values():
            shape.fit[i] = None
            shape.fit_score[i] = None

    def own(self, claim: JSON) -> None:
        for ref in meta(claim).get("ownerReferences") or []:
            self.owned.setdefault(str(ref.get("uid")), []).append((namespace_of(claim), name_of(claim)))

    def allocated_claims(self, excluding: set[tuple[str, str]]) -> list[JSON]:
        return [
            c
            for key, c in self.claims.items()
            if key not in excluding and (c.get("status") or {}).get("allocation") is not None
        ]


@dataclass
class _Shape:
    """Pods that the node filters and scores cannot tell apart (same selector, affinity, tolerations,
    extended resources and requests): per node, whether it passes the node filters (NodeUnschedulable,
    NodeAffinity, TaintToleration, NodeResourcesFit's pod count, extended resources) and its LeastAllocated
    score, computed when first needed and forgotten when a pod is bound there."""

    pod: JSON
    plan: _Plan
    requests: tuple[int, int]
    terms: list[tuple[int, JSON]]
    fit: list[bool | None]
    fit_score: list[int | None]
    affinity: list[int | None]


@dataclass
class _Plan:
    pod_claims: list[tuple[str, JSON]]  # (pod claim name or "", claim) for claims that exist
    generated: dict[str, str]  # pod claim name → generated claim name
    extended: list[ExtendedRequest]
    #: claim key → the reservedFor entry the pod uses it through (its PodGroup), when not the pod itself
    consumers: dict[tuple[str, str], JSON] = field(default_factory=dict)


class Scheduler:
    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        allocate: Allocate | None = None,
        features: frozenset[str] = DEFAULT_FEATURES,
        percentage_of_nodes_to_score: int = 0,
    ) -> None:
        self.store = store
        #: kube-scheduler's percentageOfNodesToScore (0: adaptive, 50 % − nodes/125, at least 5 %)
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self._requests: dict[str, tuple[int, int]] = {}  # pod uid → pod_requests (a pod's spec stays)
        self._arrival: dict[str, int] = {}  # pending pod uid → its place in the queue
        self._arrivals = 0
        self.clock = clock
        self._allocate = allocate
        self.features = features
        self._next_node = 0
        self.scheduled = 0
        self._allocator: Any = None
        self._allocator_signature: tuple[tuple[int, int], ...] | None = None
        self._tracked: dict[tuple[str, str], JSON] = {}  # claims recorded in the allocator's state
        self._synced_world: _World | None = None  # the pass whose claims _tracked last matched fully
        self._pod_ips = 0  # addresses handed out so far (`_pod_ip`)

    def _pod_ip(self) -> str:
        """The next address of the pod network 10.244.0.0/14 (skipping each /24's .0 and .255): no two
        running pods share one, as the CNI's IPAM sees to (a hash of the uid collided by a few thousand)."""
        subnet, host = divmod(self._pod_ips % (1024 * 254), 254)
        self._pod_ips += 1
        return f"10.{244 + subnet // 256}.{subnet % 256}.{host + 1}"

    # --- the pass --------------------------------------------------------------------------------------

    def reconcile(self) -> float | None:
        pods = read_all(self.store, "pods")
        pending = [
            p
            for p in pods
            if not (p.get("spec") or {}).get("nodeName") and not is_deleting(p) and not is_terminal(p)
        ]
        if not pending:
            return None
        self._enqueue(pending)
        pending.sort(key=lambda p: (-_priority(p), self._arrival[uid_of(p)]))
        signature: list[tuple[int, int]] = []
        inputs: dict[str, list[JSON]] = {}
        for plural in ("resourceslices", "deviceclasses", "devicetaintrules"):
            entries: list[Any] = list(self.store.snapshot(plural)[1])
            signature.append((len(entries), max((e.rv for e in entries), default=0)))
            inputs[plural] = [e.obj for e in entries]
        world = _World(
            nodes=sorted(read_all(self.store, "nodes"), key=name_of),
            classes=inputs["deviceclasses"],
            slices=inputs["resourceslices"],
            rules=inputs["devicetaintrules"],
            signature=tuple(signature),
            templates={
                (namespace_of(t), name_of(t)): t for t in read_all(self.store, "resourceclaimtemplates")
            },
            claims=_Claims(
                ((namespace_of(c), name_of(c)), c) for c in read_all(self.store, "resourceclaims")
            ),
            podgroups={(namespace_of(g), name_of(g)): g for g in read_all(self.store, "podgroups")},
            pods=pods,
            pods_per_node=Counter(
                str(p["spec"]["nodeName"])
                for p in pods
                if (p.get("spec") or {}).get("nodeName") and not is_terminal(p)
            ),
        )
        for claim in world.claims.values():
            world.own(claim)
        by_name = {name_of(n): n for n in world.nodes}
        requested = [(0, 0)] * len(world.nodes)
        known, self._requests = self._requests, {}
        for p in pods:
            bound_to = (p.get("spec") or {}).get("nodeName")
            if bound_to and not is_terminal(p) and bound_to in by_name:
                world.plugin_used.update(_plugin_use(p, by_name[bound_to]))
                uid = uid_of(p)
                asked = self._requests[uid] = known.get(uid) or pod_requests(p)
                i = world.node_index[bound_to]
                requested[i] = (requested[i][0] + asked[0], requested[i][1] + asked[1])
        world.requested = requested
        retry = False
        with events_after():  # the pass's pods are bound and started first, their events then
            for pod in pending:
                try:
                    self._schedule(clone(pod), world)
                except ApiError as error:
                    if error.status not in (404, 409) and not is_namespace_terminating(error):
                        raise
                    retry = True  # something changed under us; the next pass sees the new state
        return 0.05 if retry else None

    def _enqueue(self, pending: list[JSON]) -> None:
        """Give each pod seen pending for the first time the next place in the queue; forget the rest."""
        known = self._arrival
        self._arrival = {}
        new = []
        for pod in pending:
            uid = uid_of(pod)
            if uid in known:
                self._arrival[uid] = known[uid]
            else:
                new.append(pod)
        new.sort(key=lambda p: (creation_time(p), _resource_version(p), namespace_of(p), name_of(p)))
        for pod in new:
            self._arrivals += 1
            self._arrival[uid_of(pod)] = self._arrivals

    def _schedule(self, pod: JSON, world: _World) -> None:
        if (pod.get("spec") or {}).get("schedulingGates"):
            message = "Scheduling is blocked due to non-empty scheduling gates"
            self._mark_unschedulable(pod, message, reason="SchedulingGated")
            return
        try:
            plan = self._prepare(pod, world)
            node, results, extended = self._find_node(pod, plan, world)
        except Unschedulable as why:
            self._mark_unschedulable(pod, str(why))
            return
        self._commit(pod, plan, node, results, extended, world)

    # --- PreEnqueue / PreFilter -----------------------------------------------------------------------

    def _prepare(self, pod: JSON, world: _World) -> _Plan:
        ns = namespace_of(pod)
        status = pod.get("status") or {}
        generated = {
            str(s["name"]): str(s["resourceClaimName"])
            for s in status.get("resourceClaimStatuses") or []
            if s.get("resourceClaimName")
        }
        pod_claims: list[tuple[str, JSON]] = []
        consumers: dict[tuple[str, str], JSON] = {}
        group = self._pod_group(pod, world)
        created_any = False
        for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
            entry_name = str(entry.get("name"))
            if entry.get("resourceClaimName"):
                claim = world.claims.get((ns, str(entry["resourceClaimName"])))
                if claim is None:
                    raise Unschedulable(
                        f'pod uses resourceclaim "{entry["resourceClaimName"]}", which does not exist'
                    )
            elif entry.get("resourceClaimTemplateName"):
                claim = self._generated_claim(pod, entry_name, generated, world)
                if claim is None:
                    claim = self._create_from_template(
                        pod, entry_name, str(entry["resourceClaimTemplateName"]), world
                    )
                    created_any = True
                generated[entry_name] = name_of(claim)
            else:
                continue
            if is_deleting(claim):
                raise Unschedulable(f'resourceclaim "{name_of(claim)}" is being deleted')
            if group is not None and _group_shares(group, entry):
                consumers[(ns, name_of(claim))] = {
                    "apiGroup": PODGROUP_API_GROUP,
                    "resource": "podgroups",
                    "name": name_of(group),
                    "uid": uid_of(group),
                }
            pod_claims.append((entry_name, claim))
        if created_any:
            self._write_claim_statuses(pod, generated)
        self._drop_leftover_extended_claims(pod, world)
        extended = extended_requests(pod, extended_resources(world.classes).classes)
        return _Plan(pod_claims=pod_claims, generated=generated, extended=extended, consumers=consumers)

    def _pod_group(self, pod: JSON, world: _World) -> JSON | None:
        """The pod's PodGroup when workload claims are on (DRAWorkloadResourceClaims); a pod whose group
        does not exist yet waits for it, as upstream's scheduler does."""
        name = ((pod.get("spec") or {}).get("schedulingGroup") or {}).get("podGroupName")
        if not name:
            return None
        group = world.podgroups.get((namespace_of(pod), str(name)))
        if group is None:
            raise Unschedulable(f'pod group "{name}" does not exist')
        if not {"WorkloadResourceClaims", "DRAWorkloadResourceClaims"} & self.features:
            return None
        return group

    def _drop_leftover_extended_claims(self, pod: JSON, world: _World) -> None:
        """An unallocated extended-resource claim left by an earlier failed attempt is deleted, as the
        scheduler's PostFilter does, so the next attempt starts clean."""
        for key in list(world.owned.get(uid_of(pod), [])):
            claim = world.claims.get(key)
            if (
                claim is not None
                and is_extended_resource_claim(claim)
                and (claim.get("status") or {}).get("allocation") is None
            ):
                self.store.delete("resourceclaims", key[1], namespace=key[0], uid=uid_of(claim))
                del world.claims[key]

    def _generated_claim(
        self, pod: JSON, entry: str, generated: Mapping[str, str], world: _World
    ) -> JSON | None:
        ns = namespace_of(pod)
        if entry in generated and (ns, generated[entry]) in world.claims:
            return world.claims[(ns, generated[entry])]
        for key in world.owned.get(uid_of(pod), []):
            claim = world.claims.get(key)
            if claim is not None and (meta(claim).get("annotations") or {}).get(POD_CLAIM_NAME) == entry:
                return claim
        return None

    def _create_from_template(self, pod: JSON, entry: str, template_name: str, world: _World) -> JSON:
        ns = namespace_of(pod)
        template = world.templates.get((ns, template_name))
        if template is None:
            raise Unschedulable(
                f'PodResourceClaim {entry}: resourceclaimtemplate.resource.k8s.io "{template_name}" not found'
            )
        template_meta = (template.get("spec") or {}).get("metadata") or {}
        annotations = dict(template_meta.get("annotations") or {})
        annotations[POD_CLAIM_NAME] = entry
        claim_meta: JSON = {
            "generateName": generated_claim_prefix(name_of(pod), entry),
            "namespace": ns,
            "annotations": annotations,
            "ownerReferences": [owner_reference(pod)],
        }
        if template_meta.get("labels"):
            claim_meta["labels"] = dict(template_meta["labels"])
        claim = {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": claim_meta,
            "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {}),
        }
        # upstream's resourceclaim controller (in kube-controller-manager) makes it, not the scheduler
        with writing_as(KUBE_CONTROLLER_MANAGER):
            created = self.store.create("resourceclaims", claim)
        world.claims[(ns, name_of(created))] = created
        world.own(created)
        return created

    def _write_claim_statuses(self, pod: JSON, generated: Mapping[str, str]) -> None:
        statuses = [{"name": k, "resourceClaimName": v} for k, v in sorted(generated.items())]
        pod.setdefault("status", {})["resourceClaimStatuses"] = statuses
        with writing_as(KUBE_CONTROLLER_MANAGER):  # the resourceclaim controller's, as the claims it made
            updated = self.store.patch(
                "pods",
                name_of(pod),
                {"status": {"resourceClaimStatuses": statuses}},
                namespace=namespace_of(pod),
                subresource="status",
            )
        pod["metadata"] = updated["metadata"]

    # --- Filter ----------------------------------------------------------------------------------------

    def _find_node(
        self, pod: JSON, plan: _Plan, world: _World
    ) -> tuple[JSON, list[JSON], tuple[JSON, list[ExtendedRequest]] | None]:
        candidates = world.nodes
        if not candidates:
            raise Unschedulable(NO_NODES)
        failed: list[
            tuple[JSON, list[str]]
        ] = []  # every node that does not fit, and why (its filter's reasons)
        unavailable: list[
            JSON
        ] = []  # allocated claims some node failed for (DynamicResources' unavailableClaims)
        allocated = [c for _, c in plan.pod_claims if (c.get("status") or {}).get("allocation") is not None]
        pending = [c for _, c in plan.pod_claims if (c.get("status") or {}).get("allocation") is None]
        pending_keys = {(namespace_of(c), name_of(c)) for c in pending}
        # A claim whose device must be evicted gets no new pods (dra-api §8.4).
        joining = [c for c in allocated if not _reserved(c, pod, plan)]
        blocked = bool(joining) and self._claims_under_no_execute(joining, world, self.clock.now())
        if not allocated:
            found = self._sampled(pod, plan, world, pending, pending_keys)
            if found is not None:
                return found
        # Every node, in the rotation (the most preferred first), the first that fits: for pods joining
        # allocated claims (their allocation decides the node), and for the reasons when no node fits.
        start = self._next_node % len(candidates)
        order: Iterable[JSON] = (
            candidates[(start + offset) % len(candidates)] for offset in range(len(candidates))
        )
        preferred = preferred_terms(pod)
        if preferred:
            ranked = list(order)
            scores = {name_of(n): preference_score(preferred, n) for n in ranked}
            ranked.sort(key=lambda n: -scores[name_of(n)])
            order = ranked
        for node in order:
            why = self._node_unfit(pod, node, world)
            if why is None or why == TOO_MANY_PODS:
                insufficient = list(self._insufficient(pod, plan, node, world))
                if why is not None or insufficient:
                    # NodeResourcesFit says every resource the node lacks
                    failed.append((node, [why, *insufficient] if why else insufficient))
                    continue
            else:
                failed.append((node, [why]))
                continue
            elsewhere = [
                c
                for c in allocated
                if not node_selector_matches((c["status"]["allocation"] or {}).get("nodeSelector"), node)
            ]
            if elsewhere:
                unavailable += [c for c in elsewhere if c not in unavailable]
                failed.append((node, ["resourceclaim not available on the node"]))
                continue
            if any(
                len((c.get("status") or {}).get("reservedFor") or []) >= 256 and not _reserved(c, pod, plan)
                for c in allocated
            ):
                failed.append((node, ["resourceclaim in use by too many pods"]))
                continue
            if blocked:
                failed.append((node, ["resourceclaim uses a device with an untolerated NoExecute taint"]))
                continue
            extended = self._extended_claim(pod, plan.extended, node)
            to_allocate = [*pending, *([extended[0]] if extended else [])]
            results: list[JSON] = []
            if to_allocate:
                try:
                    outcome = self._run_allocator(world, node, to_allocate, pending_keys)
                except AllocationError as error:
                    if error.node_local:
                        failed.append(
                            (node, [str(error)])
                        )  # this node only, as upstream's ErrFailedAllocationOnNode
                        continue
                    raise Unschedulable(f"cannot allocate the pod's claims: {error}") from None
                if outcome is None:
                    failed.append((node, ["cannot allocate all claims"]))
                    continue
                results = list(outcome)
            self._next_node = world.node_index[name_of(node)] + 1
            return node, results, extended
        raise Unschedulable(self._fit_error(pod, plan, world, failed, unavailable))

    # --- PostFilter: the FitError's message -----------------------------------------------------------

    def _fit_error(
        self,
        pod: JSON,
        plan: _Plan,
        world: _World,
        failed: list[tuple[JSON, list[str]]],
        unavailable: list[JSON],
    ) -> str:
        """kube-scheduler's FitError for a pod no node takes, with what the PostFilter plugins said:
        `0/N nodes are available: <reasons>. <DynamicResources>, preemption: <DefaultPreemption>` — the
        DynamicResources plugin comes before DefaultPreemption, and a PostFilter that succeeds (preemption
        found a candidate) ends the message after the reasons."""
        total = len(world.nodes)
        message = f"0/{total} nodes are available: {_histogram(r for _, reasons in failed for r in reasons)}."
        if not plan.pod_claims and not plan.extended:
            dynamic = "no new claims to deallocate"
        elif self._post_filter(pod, unavailable, world):
            dynamic = "deallocation of ResourceClaim completed"
        else:
            dynamic = "still not schedulable"
        preemption = self._preemption(pod, plan, world, failed)
        if preemption is None:
            return message
        return f"{message} {dynamic}, preemption: {preemption}"

    def _preemption(
        self, pod: JSON, plan: _Plan, world: _World, failed: list[tuple[JSON, list[str]]]
    ) -> str | None:
        """What DefaultPreemption's PostFilter says, or None when it would find a candidate node (it would
        then evict the victims; simcluster does not preempt, so the pod just waits).

        Only a node its filters rejected as resolvable (NodeResourcesFit, within the node's size) can be
        helped; there the pods of lower priority are the possible victims, and the node is a candidate if
        the pod fits once they are gone."""
        if (pod.get("spec") or {}).get("preemptionPolicy") == "Never":
            return "not eligible due to preemptionPolicy=Never."
        priority = _priority(pod)
        statuses: list[str] = []
        for node, reasons in failed:
            if not self._resolvable(pod, node, reasons):
                statuses.append("Preemption is not helpful for scheduling")
                continue
            victims = [p for p in world.on_node(name_of(node)) if _priority(p) < priority]
            if not victims:
                statuses.append("No preemption victims found for incoming pod")
                continue
            left = self._unfit_without(pod, plan, node, world, victims)
            if not left:
                return None
            statuses += left
        return f"0/{len(world.nodes)} nodes are available: {_histogram(statuses)}."

    @staticmethod
    def _resolvable(pod: JSON, node: JSON, reasons: list[str]) -> bool:
        """NodeResourcesFit's Unschedulable (not UnschedulableAndUnresolvable): the pod count, or extended
        resources the pod asks no more of than the node has in all; every other filter's refusal stands."""
        counts = pod_extended_counts(pod)
        for reason in reasons:
            if reason == TOO_MANY_PODS:
                continue
            resource = reason.removeprefix(INSUFFICIENT)
            if resource == reason or counts.get(resource, 0) > device_plugin_capacity(node, resource):
                return False
        return True

    def _unfit_without(
        self, pod: JSON, plan: _Plan, node: JSON, world: _World, victims: list[JSON]
    ) -> list[str]:
        """NodeResourcesFit's reasons once the victims are gone from the node (none: the pod fits)."""
        reasons: list[str] = []
        capacity = count_of(((node.get("status") or {}).get("allocatable") or {}).get("pods", "110"))
        if world.pods_per_node[name_of(node)] - len(victims) >= capacity:
            reasons.append(TOO_MANY_PODS)
        freed: Counter[tuple[str, str]] = Counter()
        for victim in victims:
            freed.update(_plugin_use(victim, node))
        return reasons + list(self._insufficient(pod, plan, node, world, freed=freed))

    def _sampled(
        self,
        pod: JSON,
        plan: _Plan,
        world: _World,
        pending: list[JSON],
        pending_keys: set[tuple[str, str]],
    ) -> tuple[JSON, list[JSON], tuple[JSON, list[ExtendedRequest]] | None] | None:
        """kube-scheduler's cycle: from the rotation's start, filter nodes until `feasible_nodes_to_find`
        pass, score those, and take the best. The node filters come from the pod shape's per-node cache;
        DynamicResources' Filter (the allocator, the costly one) runs on the scored nodes best first, so
        the first that can allocate the claims wins — the best-scored feasible node of the sample. When
        none of the sample can, the next sample is taken. None: no node fits (the caller says why)."""
        nodes = world.nodes
        total = len(nodes)
        want = feasible_nodes_to_find(total, self.percentage_of_nodes_to_score)
        shape = self._shape(pod, plan, world)
        start = self._next_node % total
        scanned = 0
        while scanned < total:
            window: list[int] = []
            while scanned < total and len(window) < want:
                i = start + scanned
                if i >= total:
                    i -= total
                scanned += 1
                fit = shape.fit[i]
                if fit is None:
                    node = nodes[i]
                    fit = shape.fit[i] = not (
                        self._node_unfit(pod, node, world) or self._extended_unfit(pod, plan, node, world)
                    )
                if fit:
                    window.append(i)
            for i in _best_first(window, self._scores(shape, window, world)):
                node = nodes[i]
                extended = self._extended_claim(pod, plan.extended, node)
                to_allocate = [*pending, *([extended[0]] if extended else [])]
                results: list[JSON] = []
                if to_allocate:
                    try:
                        outcome = self._run_allocator(world, node, to_allocate, pending_keys)
                    except AllocationError as error:
                        if error.node_local:
                            continue
                        raise Unschedulable(f"cannot allocate the pod's claims: {error}") from None
                    if outcome is None:
                        continue
                    results = list(outcome)
                # Ties go to the first in the rotation and the rotation moves past the chosen node: upstream
                # picks among ties at random; the rotation spreads them the same way, reproducibly.
                self._next_node = i + 1
                return node, results, extended
        return None

    def _shape(self, pod: JSON, plan: _Plan, world: _World) -> _Shape:
        spec = pod.get("spec") or {}
        uid = uid_of(pod)
        requests = self._requests.get(uid) or pod_requests(pod)
        self._requests[uid] = requests
        affinity = spec.get("affinity") or {}
        key = json.dumps(
            [spec.get("nodeSelector"), affinity.get("nodeAffinity"), spec.get("tolerations"),
             sorted(pod_extended_counts(pod).items()), sorted(r.resource for r in plan.extended), requests],
            sort_keys=True, default=str,
        )  # fmt: skip
        shape = world.shapes.get(key)
        if shape is None:
            count = len(world.nodes)
            shape = world.shapes[key] = _Shape(
                pod=pod, plan=plan, requests=requests, terms=preferred_terms(pod),
                fit=[None] * count, fit_score=[None] * count, affinity=[None] * count,
            )  # fmt: skip
        return shape

    @staticmethod
    def _scores(shape: _Shape, window: list[int], world: _World) -> list[int]:
        """The window's weighted scores: NodeResourcesFit (LeastAllocated), plus NodeAffinity and
        TaintToleration where they can tell the nodes apart (normalized over the window, as upstream)."""
        fit_scores = []
        cpu, memory = shape.requests
        for i in window:
            score = shape.fit_score[i]
            if score is None:
                used = world.requested[i]
                score = shape.fit_score[i] = least_allocated(
                    (used[0] + cpu, used[1] + memory), world.allocatable(i)
                )
            fit_scores.append(score)
        totals = [WEIGHT_FIT * s for s in fit_scores]
        if shape.terms:
            raw = []
            for i in window:
                value = shape.affinity[i]
                if value is None:
                    value = shape.affinity[i] = preference_score(shape.terms, world.nodes[i])
                raw.append(value)
            totals = [t + WEIGHT_NODE_AFFINITY * a for t, a in zip(totals, normalize(raw), strict=True)]
        taints = world.prefer_taints
        if any(taints[i] for i in window):
            raw = [untolerated_preferences(taints[i], shape.pod) for i in window]
            totals = [
                t + WEIGHT_TAINT_TOLERATION * a
                for t, a in zip(totals, normalize(raw, reverse=True), strict=True)
            ]
        return totals

    def _post_filter(self, pod: JSON, unavailable: list[JSON], world: _World) -> bool:
        """Nothing fits: free one allocated claim a node failed for ("resourceclaim not available on the
        node") that only this pod uses, so the next attempt may allocate it somewhere that fits
        (DynamicResources' PostFilter). True when it freed one."""
        for claim in unavailable:
            users = {ref.get("uid") for ref in (claim.get("status") or {}).get("reservedFor") or []}
            if users <= {uid_of(pod)}:
                released = copy.deepcopy(claim)
                for field_name in ("allocation", "reservedFor", "devices"):
                    released["status"].pop(field_name, None)
                key = (namespace_of(claim), name_of(claim))
                world.claims[key] = self.store.update("resourceclaims", released, subresource="status")
                return True
        return False

    @staticmethod
    def _claims_under_no_execute(claims: list[JSON], world: _World, now: datetime) -> bool:
        """A claim whose device the eviction controller would evict a new user from now."""
        slice_taints, _ = published_devices(world.slices)
        rules = RuleIndex.of(world.rules)
        for claim in claims:
            for result in claim["status"]["allocation"].get("devices", {}).get("results") or []:
                if evicting_now(result, rules, slice_taints, now=now):
                    return True
        return False

    def _run_allocator(
        self, world: _World, node: JSON, claims: list[JSON], pending_keys: set[tuple[str, str]]
    ) -> list[JSON] | None:
        if self._allocate is not None:
            return self._allocate(
                classes=world.classes,
                slices=world.slices,
                allocated_claims=world.allocated_claims(pending_keys),
                claims=claims,
                node=node,
                taint_rules=world.rules,
                features=self.features,
            )
        result: list[JSON] | None = self._allocator_for(world).allocate(node, claims)
        return result

    def _allocator_for(self, world: _World) -> Any:
        """The allocator caches pools, compiled CEL and selector results, so it lives as long as slices,
        classes and rules stay the same; its allocated state follows the claims incrementally."""
        if self._allocator is None or self._allocator_signature != world.signature:
            self._allocator = Allocator(
                classes=world.classes,
                slices=world.slices,
                state=AllocatedState(),
                taint_rules=world.rules,
                features=self.features,
            )
            self._allocator_signature = world.signature
            self._tracked = {}
            self._synced_world = None
        state = self._allocator.state
        if self._synced_world is world:
            # Same pass: only the claims this pass wrote since the last call can differ.
            keys = set(world.claims.touched)
        else:
            keys = set(self._tracked) | set(world.claims)
            self._synced_world = world
        world.claims.touched.clear()
        try:
            for key in keys:
                old = self._tracked.get(key)
                new = world.claims.get(key)
                if new is not None and (new.get("status") or {}).get("allocation") is None:
                    new = None
                if new is old:
                    continue
                if old is not None and (
                    new is None
                    or uid_of(new) != uid_of(old)
                    or new["status"]["allocation"] != old["status"]["allocation"]
                ):
                    state.remove_claim(old)
                    del self._tracked[key]
                    old = None
                if new is not None:
                    if old is None:
                        state.add_claim(new)
                    self._tracked[key] = new
        except AllocationError:  # out of step: start over from the claims as they are
            self._allocator = None
            self._synced_world = None
            return self._allocator_for(world)
        return self._allocator

    @staticmethod
    def _node_unfit(pod: JSON, node: JSON, world: _World) -> str | None:
        """The first node filter that refuses the pod, in the default profile's order (NodeUnschedulable,
        TaintToleration, NodeAffinity — `dra.nodefit`, the what-if's rule too — then NodeResourcesFit's pod
        count), in its words."""
        try:
            refusal = node_refusal(pod, node)
        except SelectorError as error:  # no node can match it; the pod waits until it is replaced
            raise Unschedulable(f"invalid required node affinity: {error}") from None
        if refusal == UNTOLERATED_TAINT or (refusal is None and not node_ready(node)):
            # a NotReady node carries the node lifecycle controller's node.kubernetes.io/not-ready taint
            return UNTOLERATED_TAINT
        if refusal is not None:
            return refusal
        capacity = count_of(((node.get("status") or {}).get("allocatable") or {}).get("pods", "110"))
        if world.pods_per_node[name_of(node)] >= capacity:
            return TOO_MANY_PODS
        return None

    @staticmethod
    def _extended_claim(
        pod: JSON, requests: Sequence[ExtendedRequest], node: JSON
    ) -> tuple[JSON, list[ExtendedRequest]] | None:
        """The in-memory extended-resource claim for this node: resources the node offers as allocatable
        (a device plugin) are not served through DRA there."""
        served = [r for r in requests if not served_by_device_plugin(node, r.resource)]
        if not served:
            return None
        return extended_claim(pod, served), served

    @classmethod
    def _extended_unfit(cls, pod: JSON, plan: _Plan, node: JSON, world: _World) -> str | None:
        return next(cls._insufficient(pod, plan, node, world), None)

    @staticmethod
    def _insufficient(
        pod: JSON, plan: _Plan, node: JSON, world: _World, freed: Mapping[tuple[str, str], int] | None = None
    ) -> Iterator[str]:
        """NodeResourcesFit for extended resources: a resource the node advertises (a device plugin) must
        fit its allocatable (what `freed` gives back counted as free); one it does not advertise needs a
        DeviceClass that maps it (DRA)."""
        dra_served = {r.resource for r in plan.extended}
        for resource, count in pod_extended_counts(pod).items():
            capacity = device_plugin_capacity(node, resource)
            if capacity > 0:
                used = world.plugin_used[(name_of(node), resource)] - (freed or {}).get(
                    (name_of(node), resource), 0
                )
                if used + count > capacity:
                    yield f"{INSUFFICIENT}{resource}"
            elif resource not in dra_served:
                yield f"{INSUFFICIENT}{resource}"

    # --- PreBind / Bind --------------------------------------------------------------------------------

    def _commit(
        self,
        pod: JSON,
        plan: _Plan,
        node: JSON,
        results: list[JSON],
        extended: tuple[JSON, list[ExtendedRequest]] | None,
        world: _World,
    ) -> None:
        ns = namespace_of(pod)
        pending = [c for _, c in plan.pod_claims if (c.get("status") or {}).get("allocation") is None]
        allocations = dict(zip([(namespace_of(c), name_of(c)) for c in pending], results, strict=False))
        extended_status: JSON | None = None
        if extended is not None:
            extended_claim, served = extended
            body = copy.deepcopy(extended_claim)
            del body["metadata"]["name"]  # the API server names it from generateName
            created = self.store.create("resourceclaims", body)
            world.claims[(ns, name_of(created))] = created
            world.own(created)
            allocations[(ns, name_of(created))] = results[len(pending)]
            plan.pod_claims.append(("", created))
            extended_status = {
                "resourceClaimName": name_of(created),
                "requestMappings": [
                    {"containerName": r.container, "resourceName": r.resource, "requestName": r.request}
                    for r in served
                ],
            }
        for _, claim in plan.pod_claims:
            key = (namespace_of(claim), name_of(claim))
            world.claims[key] = self._reserve(claim, pod, allocations.get(key), plan.consumers.get(key))
        bound = bind_pod(self.store, pod, name_of(node))
        world.pods_per_node[name_of(node)] += 1
        world.placed(bound, name_of(node))
        world.plugin_used.update(_plugin_use(pod, node))
        world.bound(world.node_index[name_of(node)], self._requests.get(uid_of(pod)) or pod_requests(pod))
        self._mark_running(bound, node, plan, extended_status, world)
        self.scheduled += 1
        post_event(
            self.store,
            self.clock,
            bound,
            reason="Scheduled",
            message=f"Successfully assigned {ns}/{name_of(pod)} to {name_of(node)}",
            component=COMPONENT,
        )
        post_containers_started(self.store, self.clock, bound, name_of(node))  # its kubelet starts it

    def _reserve(self, claim: JSON, pod: JSON, allocation: JSON | None, consumer: JSON | None = None) -> JSON:
        """Finalizer first, then allocation and reservation in one status write."""
        current = self.store.get("resourceclaims", name_of(claim), namespace=namespace_of(claim))
        if allocation is not None and (current.get("status") or {}).get("allocation") is not None:
            raise ApiError(409, "Conflict", f"resourceclaim {name_of(claim)} was allocated meanwhile")
        finalizers = list(meta(current).get("finalizers") or [])
        if DELETE_PROTECTION not in finalizers:
            current["metadata"]["finalizers"] = [*finalizers, DELETE_PROTECTION]
            current = self.store.update("resourceclaims", current)
        status = current.setdefault("status", {})
        if allocation is not None:
            status["allocation"] = allocation
        ref = consumer or pod_reference(pod)
        if not reserved_for(current, str(ref["uid"])):
            status["reservedFor"] = [*(status.get("reservedFor") or []), ref]
        return self.store.update("resourceclaims", current, subresource="status")

    def _mark_running(
        self, pod: JSON, node: JSON, plan: _Plan, extended_status: JSON | None, world: _World
    ) -> None:
        now = format_time(self.clock.now())
        conditions: list[JSON] = list((pod.get("status") or {}).get("conditions") or [])
        for kind in ("PodScheduled", "Initialized", "PodReadyToStartContainers", "ContainersReady", "Ready"):
            conditions = set_condition(
                conditions,
                {
                    "type": kind,
                    "observedGeneration": pod_generation(pod),
                    "status": "True",
                    "lastTransitionTime": now,
                },
            )
        status: JSON = {
            "observedGeneration": pod_generation(pod),
            "phase": "Running",
            "conditions": conditions,
            "hostIP": _node_ip(node),
            "hostIPs": [{"ip": _node_ip(node)}],
            "podIP": (ip := self._pod_ip()),
            "podIPs": [{"ip": ip}],
            "startTime": now,
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": _image_reference(str(c.get("image", ""))),
                    "imageID": _image_id(str(c.get("image", ""))),
                    "containerID": "containerd://"
                    + hashlib.sha256(f"{uid_of(pod)}/{c['name']}".encode()).hexdigest(),
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": now}},
                }
                for c in (pod.get("spec") or {}).get("containers") or []
            ],
        }
        if plan.generated:
            status["resourceClaimStatuses"] = [
                {"name": k, "resourceClaimName": v} for k, v in sorted(plan.generated.items())
            ]
        if extended_status:
            status["extendedResourceClaimStatus"] = extended_status
        if "NodeAllocatableResources" in self.features or "DRANodeAllocatableResources" in self.features:
            # what the pod's DRA devices cost its node in cpu, memory … (KEP-5517), per claim
            with_statuses = {**pod, "status": {**(pod.get("status") or {}), **status}}
            costs = claim_statuses(
                pod=with_statuses,
                claims=[world.claims.get((namespace_of(c), name_of(c)), c) for _, c in plan.pod_claims],
                slices=world.slices,
            )
            if costs:
                status["nodeAllocatableResourceClaimStatuses"] = costs
        with writing_as(KUBELET):  # the started pod's status is the kubelet's to write, in one write here
            self.store.patch(
                "pods", name_of(pod), {"status": status}, namespace=namespace_of(pod), subresource="status"
            )

    def _mark_unschedulable(self, pod: JSON, message: str, *, reason: str = "Unschedulable") -> None:
        conditions = list((pod.get("status") or {}).get("conditions") or [])
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if current and current.get("status") == "False" and current.get("message") == message:
            return
        condition = {
            "type": "PodScheduled",
            "observedGeneration": pod_generation(pod),
            "status": "False",
            "reason": reason,
            "message": message,
            "lastTransitionTime": format_time(self.clock.now()),
        }
        self.store.patch(
            "pods",
            name_of(pod),
            {"status": {"phase": "Pending", "conditions": set_condition(conditions, condition)}},
            namespace=namespace_of(pod),
            subresource="status",
        )
        post_event(
            self.store,
            self.clock,
            pod,
            reason="FailedScheduling",
            message=message,
            component=COMPONENT,
            event_type="Warning",
        )


def _node_ip(node: Mapping[str, Any]) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address["address"])
    return "10.0.0.1"


def _image_reference(image: str) -> str:
    """The image as containerd reports it: a short name gets the docker.io registry (and library/ namespace)."""
    first = image.split("/", 1)[0]
    if not ("/" in image and ("." in first or ":" in first or first == "localhost")):
        image = f"docker.io/{image}" if "/" in image else f"docker.io/library/{image}"
    if "@" not in image and ":" not in image.rsplit("/", 1)[-1]:
        image += ":latest"
    return image


def _image_id(image: str) -> str:
    """`<repository>@sha256:<digest>`: what the runtime pulled, stable per image reference."""
    reference = _image_reference(image)
    if "@" in reference:
        return reference
    repository = reference
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return f"{repository}@sha256:{hashlib.sha256(reference.encode()).hexdigest()}"


def _plugin_use(pod: JSON, node: JSON) -> Counter[tuple[str, str]]:
    """The devices of the node's device plugins the pod holds (resources the node advertises)."""
    return Counter(
        {(name_of(node), resource): count for resource, count in pod_device_plugin_use(pod, node).items()}
    )


def _best_first(window: list[int], scores: list[int]) -> Iterator[int]:
    """The window's nodes, the best score first (ties: the first in the rotation); the rest sorted only
    when the best cannot take the pod."""
    if not window:
        return
    best = max(range(len(window)), key=scores.__getitem__)
    yield window[best]
    rest = sorted((k for k in range(len(window)) if k != best), key=lambda k: -scores[k])
    for k in rest:
        yield window[k]


def _group_shares(group: JSON, entry: JSON) -> bool:
    """The PodGroup lists the pod's claim entry exactly (same name, same ResourceClaim): the claim is
    reserved for the group, not the pod. Claims from a group's template are not generated here."""
    return any(
        g.get("name") == entry.get("name")
        and g.get("resourceClaimName")
        and g.get("resourceClaimName") == entry.get("resourceClaimName")
        for g in (group.get("spec") or {}).get("resourceClaims") or ()
    )


def _reserved(claim: JSON, pod: JSON, plan: _Plan) -> bool:
    consumer = plan.consumers.get((namespace_of(claim), name_of(claim)))
    return reserved_for(claim, uid_of(pod)) or (
        consumer is not None and reserved_for(claim, str(consumer["uid"]))
    )


def _histogram(reasons: Iterable[str]) -> str:
    """FitError's reason histogram: `<count> <reason>` per reason, sorted as strings (Go's sort.Strings)."""
    return ", ".join(sorted(f"{count} {reason}" for reason, count in Counter(reasons).items()))


def _priority(pod: Mapping[str, Any]) -> int:
    """`spec.priority` as the Priority admission plugin set it (0 without a class)."""
    value = (pod.get("spec") or {}).get("priority")
    return value if isinstance(value, int) else 0


def _resource_version(obj: Mapping[str, Any]) -> int:
    value = str((obj.get("metadata") or {}).get("resourceVersion") or "")
    return int(value) if value.isdigit() else 0
